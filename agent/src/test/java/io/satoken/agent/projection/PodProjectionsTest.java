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

/** A pod's token directory: PV-14 keys and the PV-16..PV-18 mode and owner rule. */
class PodProjectionsTest {

    private static final Path ROOT = Path.of("/var/lib/satoken");
    private static final String UID = "0b7e6f0a-1111-2222-3333-444455556666";

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
    void directory_modeAndOwner(Case c) {
        Projection p = PodProjections.directory(pod(c.pod()), List.of(c.spec()), ROOT).projections().get(0);

        assertThat(Integer.toOctalString(p.mode())).isEqualTo(Integer.toOctalString(c.mode()));
        assertThat(p.uid()).isEqualTo(c.uid());
        assertThat(p.gid()).isEqualTo(c.gid());
    }

    @Test
    void directory_isThePodsOwn() {
        TokenDirectory dir = PodProjections.directory(pod(s -> s), List.of(ProjectionSpec.of("a/token")), ROOT);

        assertThat(dir.name()).isEqualTo("pod:" + UID);
        assertThat(dir.dir()).isEqualTo(Path.of("/var/lib/satoken/pods", UID));
        assertThat(dir.projections()).extracting(Projection::path).containsExactly("a/token");
    }

    @Test
    void directory_keyIsBoundToThePod() {
        // PV-14
        TokenDirectory dir = PodProjections.directory(pod(s -> s),
                List.of(new ProjectionSpec("t", "https://vault", 7200, null, null, null)), ROOT);

        assertThat(dir.projections().get(0).key()).isEqualTo(new TokenKey("shop", "web", List.of("https://vault"), 7200,
                BoundObjectRef.pod("web-0", UID)));
    }

    @Test
    void directory_noAudience_sendsNullNotAnEmptyList() throws InvalidProjectionException {
        // PV-14: an empty audience is no audiences at all, so the API server uses its own
        List<ProjectionSpec> specs = ProjectionAnnotation.parse("- {path: a, audience: ''}\n- {path: b}\n");

        TokenDirectory dir = PodProjections.directory(pod(s -> s), specs, ROOT);

        assertThat(dir.projections()).extracting(p -> p.key().audiences()).containsExactly(null, null);
        assertThat(dir.keys()).hasSize(1);
    }

    @Test
    void directory_withoutServiceAccountName_usesDefault() {
        for (String name : new String[] {null, ""}) {
            V1Pod pod = pod(s -> s.serviceAccountName(name));

            TokenKey key = PodProjections.directory(pod, List.of(ProjectionSpec.of("t")), ROOT).projections().get(0).key();

            assertThat(key.serviceAccount()).as("serviceAccountName %s", name).isEqualTo("default");
        }
    }

    @Test
    void directory_sameRequest_sharesOneKey() {
        TokenDirectory dir = PodProjections.directory(pod(s -> s), List.of(
                new ProjectionSpec("a", "x", 3600, null, null, null),
                new ProjectionSpec("b", "x", 3600, 0400, null, null),
                new ProjectionSpec("c", "x", 600, null, null, null)), ROOT);

        assertThat(dir.keys()).extracting(TokenKey::expirationSeconds).containsExactly(3600L, 600L);
    }

    @Test
    void directory_withoutSpec_hasNoFsIds() {
        V1Pod pod = new V1Pod().metadata(new V1ObjectMeta().name("p").namespace("n").uid("u"));

        Projection p = PodProjections.directory(pod, List.of(ProjectionSpec.of("t")), ROOT).projections().get(0);

        assertThat(p.mode()).isEqualTo(0644);
        assertThat(p.key().serviceAccount()).isEqualTo("default");
    }

    record BadPod(String name, V1Pod pod, String message) {
        @Override
        public String toString() {
            return name;
        }
    }

    static Stream<BadPod> badPods() {
        return Stream.of(
                new BadPod("no uid", pod(s -> s).metadata(new V1ObjectMeta().name("p").namespace("n")),
                        "metadata.uid: Required value"),
                new BadPod("uid climbs out", pod(s -> s).metadata(new V1ObjectMeta().name("p").namespace("n").uid("../x")),
                        "metadata.uid: must be a plain path element, got \"../x\""),
                new BadPod("uid with a slash", pod(s -> s).metadata(new V1ObjectMeta().name("p").namespace("n").uid("a/b")),
                        "metadata.uid: must be a plain path element, got \"a/b\""),
                new BadPod("no name", pod(s -> s).metadata(new V1ObjectMeta().namespace("n").uid("u")),
                        "metadata.name: Required value"),
                new BadPod("no namespace", pod(s -> s).metadata(new V1ObjectMeta().name("p").uid("u")),
                        "metadata.namespace: Required value"),
                new BadPod("fsGroup beyond int", pod(s -> s.securityContext(podContext(null, 1L << 31))),
                        "spec.securityContext.fsGroup: must be between 0 and 2147483647, got 2147483648"),
                new BadPod("runAsUser negative", pod(s -> s.addContainersItem(container("a", -1L))),
                        "securityContext.runAsUser: must be between 0 and 2147483647, got -1"));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("badPods")
    void directory_badPod_rejected(BadPod c) {
        assertThatThrownBy(() -> PodProjections.directory(c.pod(), List.of(ProjectionSpec.of("t")), ROOT))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage(c.message());
    }
}
