package io.satoken.agent.projection;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.kubernetes.client.openapi.models.V1Container;
import io.kubernetes.client.openapi.models.V1EphemeralContainer;
import io.kubernetes.client.openapi.models.V1ObjectMeta;
import io.kubernetes.client.openapi.models.V1Pod;
import io.kubernetes.client.openapi.models.V1PodSecurityContext;
import io.kubernetes.client.openapi.models.V1PodSpec;
import io.kubernetes.client.openapi.models.V1SecurityContext;
import io.satoken.agent.token.BoundObjectRef;
import io.satoken.agent.token.TokenKey;
import io.satoken.common.projection.InvalidProjectionException;
import io.satoken.common.projection.ProjectionAnnotation;
import io.satoken.common.projection.ProjectionSpec;
import java.nio.file.Path;
import java.util.List;
import java.util.function.UnaryOperator;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/** A CSI volume's token files: PV-14 keys bound to the kubelet's pod, and the PV-16..PV-18 mode and owner rule. */
class PodProjectionsTest {

    private static final String UID = "0b7e6f0a-1111-2222-3333-444455556666";
    /** Who the kubelet says asks: the pod info of NodePublishVolume. */
    private static final PodIdentity WEB = new PodIdentity("shop", "web-0", UID, "web");

    private static V1Pod pod(UnaryOperator<V1PodSpec> spec) {
        return new V1Pod()
                .metadata(new V1ObjectMeta().name("web-0").namespace("shop").uid(UID))
                .spec(spec.apply(new V1PodSpec().serviceAccountName("web")));
    }

    private static V1Container container(String name, Long runAsUser) {
        V1Container c = new V1Container().name(name).image("img");
        return runAsUser == null ? c : c.securityContext(new V1SecurityContext().runAsUser(runAsUser));
    }

    private static V1PodSecurityContext podContext(Long runAsUser, Long fsGroup) {
        return new V1PodSecurityContext().runAsUser(runAsUser).fsGroup(fsGroup);
    }

    private static ProjectionSpec spec(Integer mode, Integer uid, Integer gid) {
        return new ProjectionSpec("token", null, 3600, mode, uid, gid);
    }

    record Case(String name, UnaryOperator<V1PodSpec> pod, ProjectionSpec spec, int mode, Integer uid, Integer gid) {
        @Override
        public String toString() {
            return name;
        }
    }

    static Stream<Case> modeAndOwner() {
        ProjectionSpec plain = ProjectionSpec.of("token");
        return Stream.of(
                // PV-1
                new Case("no security context", s -> s.addContainersItem(container("app", null)), plain, 0644, null, null),
                // PV-17
                new Case("fsGroup only", s -> s.securityContext(podContext(null, 2000L))
                        .addContainersItem(container("app", null)), plain, 0640, null, 2000),
                // PV-16, PV-18
                new Case("fsUser only, from the pod", s -> s.securityContext(podContext(1000L, null))
                        .addContainersItem(container("app", null)), plain, 0600, 1000, null),
                new Case("fsUser and fsGroup", s -> s.securityContext(podContext(1000L, 2000L))
                        .addContainersItem(container("app", null)), plain, 0640, 1000, 2000),
                new Case("fsUser root", s -> s.securityContext(podContext(0L, null))
                        .addContainersItem(container("app", null)), plain, 0600, 0, null),
                // PV-18: the container's value over the pod's, shared by every container
                new Case("containers override the pod alike", s -> s.securityContext(podContext(1000L, null))
                        .addContainersItem(container("a", 1001L)).addContainersItem(container("b", 1001L)),
                        plain, 0600, 1001, null),
                new Case("one container overrides, one inherits the same", s -> s.securityContext(podContext(1000L, null))
                        .addContainersItem(container("a", 1000L)).addContainersItem(container("b", null)),
                        plain, 0600, 1000, null),
                new Case("containers disagree", s -> s.addContainersItem(container("a", 1000L))
                        .addContainersItem(container("b", 1001L)), plain, 0644, null, null),
                new Case("a container overrides the pod", s -> s.securityContext(podContext(1000L, null))
                        .addContainersItem(container("a", null)).addContainersItem(container("b", 1001L)),
                        plain, 0644, null, null),
                new Case("a container without runAsUser", s -> s.addContainersItem(container("a", 1000L))
                        .addContainersItem(container("b", null)), plain, 0644, null, null),
                new Case("init container disagrees", s -> s.addInitContainersItem(container("init", 0L))
                        .addContainersItem(container("a", 1000L)), plain, 0644, null, null),
                new Case("init container agrees", s -> s.addInitContainersItem(container("init", 1000L))
                        .addContainersItem(container("a", 1000L)), plain, 0600, 1000, null),
                new Case("ephemeral container without runAsUser", s -> s.addContainersItem(container("a", 1000L))
                        .addEphemeralContainersItem(new V1EphemeralContainer().name("debug")), plain, 0644, null, null),
                new Case("ephemeral container inherits the pod's", s -> s.securityContext(podContext(1000L, null))
                        .addContainersItem(container("a", null))
                        .addEphemeralContainersItem(new V1EphemeralContainer().name("debug")), plain, 0600, 1000, null),
                new Case("no containers", s -> s.securityContext(podContext(1000L, null)), plain, 0644, null, null),
                // PV-16: runAsGroup and supplementalGroups give the file no group; only fsGroup does
                new Case("runAsGroup is not the file's group", s -> s.securityContext(podContext(1000L, null)
                        .runAsGroup(3000L)).addContainersItem(container("app", null)), plain, 0600, 1000, null),
                new Case("supplementalGroups are not the file's group", s -> s.securityContext(podContext(1000L, null)
                        .supplementalGroups(List.of(4000L))).addContainersItem(container("app", null)),
                        plain, 0600, 1000, null),
                new Case("disagreeing users, fsGroup still applies", s -> s.securityContext(podContext(null, 2000L))
                        .addContainersItem(container("a", 1L)).addContainersItem(container("b", 2L)),
                        plain, 0640, null, 2000),
                // the annotation's mode, uid and gid
                new Case("annotation mode, no fs ids", s -> s.addContainersItem(container("a", null)),
                        spec(0400, null, null), 0400, null, null),
                new Case("annotation mode, fsGroup forces 0640", s -> s.securityContext(podContext(null, 2000L))
                        .addContainersItem(container("a", null)), spec(0400, null, null), 0640, null, 2000),
                new Case("annotation mode, fsUser forces 0600", s -> s.securityContext(podContext(1000L, null))
                        .addContainersItem(container("a", null)), spec(0444, null, null), 0600, 1000, null),
                new Case("annotation uid, no fs ids", s -> s.addContainersItem(container("a", null)),
                        spec(null, 7, null), 0600, 7, null),
                new Case("annotation gid, no fs ids", s -> s.addContainersItem(container("a", null)),
                        spec(null, null, 8), 0640, null, 8),
                new Case("annotation uid overrides fsUser", s -> s.securityContext(podContext(1000L, 2000L))
                        .addContainersItem(container("a", null)), spec(null, 7, null), 0640, 7, 2000),
                new Case("annotation gid overrides fsGroup", s -> s.securityContext(podContext(1000L, 2000L))
                        .addContainersItem(container("a", null)), spec(null, null, 8), 0640, 1000, 8),
                new Case("annotation uid and gid", s -> s.addContainersItem(container("a", null)),
                        spec(0755, 7, 8), 0640, 7, 8),
                new Case("annotation uid 0", s -> s.addContainersItem(container("a", null)),
                        spec(null, 0, null), 0600, 0, null));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("modeAndOwner")
    void projections_modeAndOwner(Case c) {
        Projection p = PodProjections.projections(WEB, pod(c.pod()), List.of(c.spec())).get(0);

        assertThat(Integer.toOctalString(p.mode())).isEqualTo(Integer.toOctalString(c.mode()));
        assertThat(p.uid()).isEqualTo(c.uid());
        assertThat(p.gid()).isEqualTo(c.gid());
    }

    @Test
    void projections_keepPathsInOrder() {
        List<Projection> files = PodProjections.projections(WEB, pod(s -> s),
                List.of(ProjectionSpec.of("a/token"), ProjectionSpec.of("b")));

        assertThat(files).extracting(Projection::path).containsExactly("a/token", "b");
    }

    @Test
    void projections_keyIsBoundToThePod() {
        // PV-14
        List<Projection> files = PodProjections.projections(WEB, pod(s -> s),
                List.of(new ProjectionSpec("t", "https://vault", 7200, null, null, null)));

        assertThat(files.get(0).key()).isEqualTo(new TokenKey("shop", "web", List.of("https://vault"), 7200,
                BoundObjectRef.pod("web-0", UID)));
    }

    @Test
    void projections_identityComesFromTheKubelet_notFromThePodObject() {
        // the API's copy of the pod is read for its securityContext only: a different ServiceAccount, name,
        // namespace or uid in it changes nothing about whom the token is for
        PodIdentity kubelets = new PodIdentity("kubelets-ns", "kubelets-pod", "kubelets-uid", "kubelets-sa");
        V1Pod other = pod(s -> s.serviceAccountName("admin"))
                .metadata(new V1ObjectMeta().name("other").namespace("kube-system").uid("other-uid"));

        TokenKey key = PodProjections.projections(kubelets, other, List.of(ProjectionSpec.of("t"))).get(0).key();

        assertThat(key).isEqualTo(new TokenKey("kubelets-ns", "kubelets-sa", null, 3600,
                BoundObjectRef.pod("kubelets-pod", "kubelets-uid")));
    }

    @Test
    void projections_noAudience_sendsNullNotAnEmptyList() throws InvalidProjectionException {
        // PV-14: an empty audience is no audiences at all, so the API server uses its own
        List<ProjectionSpec> specs = ProjectionAnnotation.parse("- {path: a, audience: ''}\n- {path: b}\n");

        List<Projection> files = PodProjections.projections(WEB, pod(s -> s), specs);

        assertThat(files).extracting(p -> p.key().audiences()).containsExactly(null, null);
        assertThat(new TokenDirectory("d", Path.of("/d"), files).keys()).hasSize(1);
    }

    @Test
    void projections_sameRequest_sharesOneKey() {
        List<Projection> files = PodProjections.projections(WEB, pod(s -> s), List.of(
                new ProjectionSpec("a", "x", 3600, null, null, null),
                new ProjectionSpec("b", "x", 3600, 0400, null, null),
                new ProjectionSpec("c", "x", 600, null, null, null)));

        assertThat(files).extracting(p -> p.key().expirationSeconds()).containsExactly(3600L, 3600L, 600L);
        assertThat(files.get(0).key()).isEqualTo(files.get(1).key());
    }

    @Test
    void projections_podWithoutSpec_hasNoFsIds() {
        // PV-1
        V1Pod pod = new V1Pod().metadata(new V1ObjectMeta().name("web-0").namespace("shop").uid(UID));

        Projection p = PodProjections.projections(WEB, pod, List.of(ProjectionSpec.of("t"))).get(0);

        assertThat(p.mode()).isEqualTo(0644);
        assertThat(p.uid()).isNull();
        assertThat(p.gid()).isNull();
    }

    @Test
    void projections_noSpecs_noFiles() {
        assertThat(PodProjections.projections(WEB, pod(s -> s), List.of())).isEmpty();
    }

    record BadPod(String name, V1Pod pod, String message) {
        @Override
        public String toString() {
            return name;
        }
    }

    static Stream<BadPod> badPods() {
        return Stream.of(
                new BadPod("fsGroup beyond int", pod(s -> s.securityContext(podContext(null, 1L << 31))),
                        "spec.securityContext.fsGroup: must be between 0 and 2147483647, got 2147483648"),
                new BadPod("fsGroup negative", pod(s -> s.securityContext(podContext(null, -5L))),
                        "spec.securityContext.fsGroup: must be between 0 and 2147483647, got -5"),
                new BadPod("runAsUser negative", pod(s -> s.addContainersItem(container("a", -1L))),
                        "spec.containers[0].securityContext.runAsUser: must be between 0 and 2147483647, got -1"),
                new BadPod("init container's runAsUser negative", pod(s -> s.addInitContainersItem(container("i", -1L))
                        .addContainersItem(container("a", -1L))),
                        "spec.initContainers[0].securityContext.runAsUser: must be between 0 and 2147483647, got -1"),
                new BadPod("pod runAsUser beyond int", pod(s -> s.securityContext(podContext(1L << 32, null))
                        .addContainersItem(container("a", null))),
                        "spec.securityContext.runAsUser: must be between 0 and 2147483647, got 4294967296"));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("badPods")
    void projections_idsOutOfRange_rejected(BadPod c) {
        assertThatThrownBy(() -> PodProjections.projections(WEB, c.pod(), List.of(ProjectionSpec.of("t"))))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage(c.message());
    }

    record OwnerField(String name, UnaryOperator<V1PodSpec> pod, List<ProjectionSpec> specs, boolean group, int id,
            String field) {
        @Override
        public String toString() {
            return name;
        }
    }

    static Stream<OwnerField> ownerFields() {
        List<ProjectionSpec> plain = List.of(ProjectionSpec.of("t"));
        return Stream.of(
                // PV-18: the pod's runAsUser, or the first container's own when it sets one
                new OwnerField("the pod's runAsUser", s -> s.securityContext(podContext(1000L, null))
                        .addContainersItem(container("a", null)), plain, false, 1000, "spec.securityContext.runAsUser"),
                new OwnerField("containers' own runAsUser", s -> s.addContainersItem(container("a", 1000L))
                        .addContainersItem(container("b", 1000L)), plain, false, 1000,
                        "spec.containers[0].securityContext.runAsUser"),
                new OwnerField("an init container's first", s -> s.securityContext(podContext(1000L, null))
                        .addInitContainersItem(container("init", 1000L)).addContainersItem(container("a", null)),
                        plain, false, 1000, "spec.initContainers[0].securityContext.runAsUser"),
                // PV-17
                new OwnerField("fsGroup", s -> s.securityContext(podContext(null, 2000L))
                        .addContainersItem(container("a", null)), plain, true, 2000, "spec.securityContext.fsGroup"),
                // an entry's own uid or gid wins over the pod's
                new OwnerField("an entry's gid", s -> s.securityContext(podContext(null, 2000L))
                        .addContainersItem(container("a", null)),
                        List.of(ProjectionSpec.of("a"), spec(null, null, 2000)), true, 2000, "attrs[1].gid"),
                new OwnerField("an entry's uid", s -> s.addContainersItem(container("a", null)),
                        List.of(spec(null, 7, null)), false, 7, "attrs[0].uid"),
                new OwnerField("no field gives it", s -> s.addContainersItem(container("a", null)), plain, true, 5, null));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("ownerFields")
    void podOwners_fieldOf_namesWhereAnIdComesFrom(OwnerField c) {
        PodOwners owners = PodOwners.of(pod(c.pod()));

        assertThat(owners.fieldOf(c.group(), c.id(), c.specs(), "attrs")).isEqualTo(c.field());
    }
}
