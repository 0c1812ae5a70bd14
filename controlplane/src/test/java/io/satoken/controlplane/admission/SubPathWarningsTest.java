package io.satoken.controlplane.admission;

import static io.satoken.controlplane.admission.AdmissionFixtures.account;
import static io.satoken.controlplane.admission.AdmissionFixtures.pod;
import static io.satoken.controlplane.admission.AdmissionFixtures.podCreate;
import static io.satoken.controlplane.admission.AdmissionFixtures.request;
import static org.assertj.core.api.Assertions.assertThat;

import com.google.gson.JsonObject;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * A pod that mounts a tokens.satoken.io volume through subPath or subPathExpr is admitted with a warning naming the
 * container, the volume and why (the mounted file never rotates, as with a projected volume); nothing is refused
 * and nothing else warns.
 */
class SubPathWarningsTest {

    private static final String SATOKEN = "{'name':'tokens','csi':{'driver':'tokens.satoken.io','readOnly':true}}";
    private static final String OTHER_CSI = "{'name':'secrets','csi':{'driver':'secrets-store.csi.k8s.io'}}";
    private static final String PROJECTED = "{'name':'kube-token','projected':{'sources':[{'serviceAccountToken':"
            + "{'path':'token'}}]}}";
    private static final String WHY = "so it never sees a refreshed token (as with a projected volume) and keeps one "
            + "that expires; mount the volume's directory";

    private final AdmissionFixtures.Accounts accounts = new AdmissionFixtures.Accounts().cache(account("default"));
    // through the webhook's streaming reader too: a field it dropped would silence the warning
    private final Admission mutation = AdmissionFixtures.checkedThroughReader(
            ServiceAccountAdmissionTest.mutation(accounts, false));

    record Case(String name, String volumes, String initContainers, String containers, List<String> warnings) {
        @Override
        public String toString() {
            return name;
        }
    }

    private static String container(String name, String... mounts) {
        return "{'name':'" + name + "','image':'i','volumeMounts':[" + String.join(",", mounts) + "]}";
    }

    private static String mount(String volume, String extra) {
        return "{'name':'" + volume + "','mountPath':'/t'" + extra + "}";
    }

    private static String warning(String container, String name, String volume, String field) {
        return container + " (" + name + "): mounts the tokens.satoken.io volume \"" + volume + "\" with " + field
                + ", " + WHY;
    }

    static Stream<Case> cases() {
        return Stream.of(
                new Case("subPath in a container", SATOKEN, "", container("app", mount("tokens", ",'subPath':'token'")),
                        List.of(warning("spec.containers[0]", "app", "tokens", "subPath"))),
                new Case("subPathExpr in an init container", SATOKEN,
                        container("init", mount("tokens", ",'subPathExpr':'$(POD)/token'")), container("app"),
                        List.of(warning("spec.initContainers[0]", "init", "tokens", "subPathExpr"))),
                new Case("each such mount, in order", SATOKEN,
                        container("init", mount("tokens", ",'subPath':'a'")),
                        container("app", mount("tokens", "")) + "," + container("side", mount("tokens", ",'subPath':'b'")),
                        List.of(warning("spec.initContainers[0]", "init", "tokens", "subPath"),
                                warning("spec.containers[1]", "side", "tokens", "subPath"))),
                new Case("the directory mounted: nothing to say", SATOKEN, "", container("app", mount("tokens", "")),
                        List.of()),
                new Case("an empty subPath is the whole volume", SATOKEN, "",
                        container("app", mount("tokens", ",'subPath':''")), List.of()),
                new Case("another CSI driver's volume", OTHER_CSI, "",
                        container("app", mount("secrets", ",'subPath':'x'")), List.of()),
                // kubelet's own projected token through subPath is the same trap, but not ours to judge
                new Case("a projected volume", PROJECTED, "", container("app", mount("kube-token", ",'subPath':'token'")),
                        List.of()));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("cases")
    void create_warnsForEachSubPathMountOfATokenVolume_andAdmits(Case c) throws Exception {
        JsonObject pod = pod("{'serviceAccountName':'default','automountServiceAccountToken':false,"
                + "'volumes':[" + c.volumes() + "],"
                + (c.initContainers().isEmpty() ? "" : "'initContainers':[" + c.initContainers() + "],")
                + "'containers':[" + c.containers() + "]}");

        Verdict verdict = mutation.review(podCreate(pod));

        assertThat(verdict.allowed()).isTrue();
        assertThat(verdict.warnings()).containsExactlyElementsOf(c.warnings());
    }

    @Test
    void create_injectedVolumeMountedBySubPath_warnsAsWell_andIsStillPatched() throws Exception {
        // the webhook's own volume, which a container also mounts by one file
        JsonObject pod = pod("{'satoken.io/projections':'[{path: token}]'}", "{'serviceAccountName':'default',"
                + "'automountServiceAccountToken':false,'containers':[" + container("app",
                        "{'name':'satoken-agent-tokens','mountPath':'/token','subPath':'token'}") + "]}");

        Verdict verdict = mutation.review(podCreate(pod));

        assertThat(verdict).isInstanceOf(Verdict.Patched.class);
        assertThat(verdict.warnings()).containsExactly(
                warning("spec.containers[0]", "app", "satoken-agent-tokens", "subPath"));
    }

    @Test
    void ephemeralContainersUpdate_doesNotRepeatTheWarning() throws Exception {
        JsonObject pod = pod("{'serviceAccountName':'default','automountServiceAccountToken':false,'volumes':["
                + SATOKEN + "],'containers':[" + container("app", mount("tokens", ",'subPath':'token'")) + "]}");

        Verdict verdict = mutation.review(request("UPDATE", "pods", "ephemeralcontainers", pod));

        assertThat(verdict.allowed()).isTrue();
        assertThat(verdict.warnings()).isEmpty();
    }
}
