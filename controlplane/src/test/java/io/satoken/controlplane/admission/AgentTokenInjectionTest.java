package io.satoken.controlplane.admission;

import static io.satoken.controlplane.admission.AdmissionFixtures.account;
import static io.satoken.controlplane.admission.AdmissionFixtures.denied;
import static io.satoken.controlplane.admission.AdmissionFixtures.gson;
import static io.satoken.controlplane.admission.AdmissionFixtures.jackson;
import static io.satoken.controlplane.admission.AdmissionFixtures.patched;
import static io.satoken.controlplane.admission.AdmissionFixtures.pod;
import static io.satoken.controlplane.admission.AdmissionFixtures.podCreate;
import static io.satoken.controlplane.admission.AdmissionFixtures.request;
import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.google.gson.JsonObject;
import com.google.gson.JsonParser;
import io.satoken.common.projection.InvalidProjectionException;
import io.satoken.common.projection.ProjectionAnnotation;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * A pod with {@code satoken.io/projections} gets the agent's CSI inline volume (driver tokens.satoken.io,
 * the annotation's value as its {@code projections} attribute) and a read-only mount of it in every init and
 * regular container: no hostPath, no environment variable, no subPathExpr, so nothing the pod sets can point
 * the volume at another pod. Token automount is off in most of these pods so that only the injection shows
 * in the patch.
 */
class AgentTokenInjectionTest {

    static final String PROJECTIONS = "[{path: vault/token, audience: vault}]";
    static final String ANNOTATION = "{'satoken.io/projections':'" + PROJECTIONS + "'}";

    /** The injected volume, written out here independently of the code that builds it. */
    static String volume(String projections) {
        return "{'name':'satoken-agent-tokens','csi':{'driver':'tokens.satoken.io','readOnly':true,"
                + "'volumeAttributes':{'projections':'" + projections + "'}}}";
    }

    static String mount(String path) {
        return "{'name':'satoken-agent-tokens','readOnly':true,'mountPath':'" + path + "'}";
    }

    final AdmissionFixtures.Accounts accounts = new AdmissionFixtures.Accounts().cache(account("default"));
    final Admission mutation = AdmissionFixtures.checkedThroughReader(
            ServiceAccountAdmissionTest.mutation(accounts, false));

    @Test
    void annotatedPod_getsCsiVolume_andReadOnlyMountInInitAndRegularContainers() throws Exception {
        JsonObject pod = pod(ANNOTATION, "{'serviceAccountName':'default','automountServiceAccountToken':false,"
                + "'initContainers':[{'name':'init','image':'i'}],'containers':[{'name':'app','image':'i',"
                + "'env':[{'name':'A','value':'1'}]}],'ephemeralContainers':[{'name':'e','image':'i'}]}");

        JsonNode result = admitTwice(pod);

        assertThat(result.get("spec")).isEqualTo(jackson("{'serviceAccountName':'default',"
                + "'automountServiceAccountToken':false,'initContainers':[{'name':'init','image':'i','volumeMounts':["
                + mount("/var/run/secrets/satoken") + "]}],'containers':[{'name':'app','image':'i',"
                + "'env':[{'name':'A','value':'1'}],'volumeMounts':[" + mount("/var/run/secrets/satoken") + "]}],"
                + "'ephemeralContainers':[{'name':'e','image':'i'}],'volumes':[" + volume(PROJECTIONS) + "]}"));
    }

    @Test
    void volumeAttribute_isTheAnnotationVerbatim_soTheAgentParsesWhatWasChecked() throws Exception {
        String yaml = "- path: vault/token\\n  audience: vault\\n- path: sts/token\\n  audience: sts.amazonaws.com\\n"
                + "  expirationSeconds: 7200\\n";
        JsonObject pod = pod("{'satoken.io/projections':'" + yaml + "'}", "{'serviceAccountName':'default',"
                + "'automountServiceAccountToken':false,'containers':[{'name':'app','image':'i'}]}");

        JsonNode result = admitTwice(pod);

        assertThat(result.at("/spec/volumes/0/csi/volumeAttributes/projections").asText())
                .isEqualTo(result.at("/metadata/annotations/satoken.io~1projections").asText())
                .contains("sts/token\n  audience: sts.amazonaws.com\n  expirationSeconds: 7200\n");
        assertThat(result.at("/spec/volumes/0/csi/volumeAttributes").size()).isEqualTo(1);
    }

    @Test
    void reloadAnnotations_becomeTheVolumesReloadAttributes_andReinvocationChangesNothing() throws Exception {
        JsonObject pod = pod("{'satoken.io/projections':'[{path: t}]','satoken.io/reload-signal':'SIGHUP',"
                + "'satoken.io/reload-container':'app'}", "{'automountServiceAccountToken':false,"
                + "'serviceAccountName':'default','containers':[{'name':'app','image':'i'},{'name':'side','image':'i'}]}");

        JsonNode result = admitTwice(pod);

        assertThat(result.at("/spec/volumes/0/csi/volumeAttributes")).isEqualTo(jackson("{'projections':'[{path: t}]',"
                + "'reloadContainer':'app','reloadSignal':'SIGHUP'}"));
    }

    @Test
    void reloadContainerAnnotation_withoutTheSignal_refusedNamingIt() throws Exception {
        JsonObject pod = pod("{'satoken.io/projections':'[{path: t}]','satoken.io/reload-container':'app'}",
                "{'automountServiceAccountToken':false,'serviceAccountName':'default','containers':[{'name':'app',"
                        + "'image':'i'}]}");

        Verdict verdict = mutation.review(podCreate(pod));

        assertThat(verdict.allowed()).isFalse();
        assertThat(denied(verdict).message()).isEqualTo("satoken.io/reload-container: may be given only with"
                + " satoken.io/reload-signal, which names the signal");
    }

    @Test
    void mountPathAnnotation_movesTheMount() throws Exception {
        JsonObject pod = pod("{'satoken.io/projections':'[{path: t}]','satoken.io/mount-path':'/tokens'}",
                "{'automountServiceAccountToken':false,'serviceAccountName':'default','containers':[{'name':'app',"
                        + "'image':'i'}]}");

        JsonNode result = admitTwice(pod);

        assertThat(result.at("/spec/containers/0/volumeMounts")).isEqualTo(jackson("[" + mount("/tokens") + "]"));
    }

    @Test
    void bothMutations_shareOnePatch_withTheServiceAccountToken() throws Exception {
        JsonObject pod = pod(ANNOTATION, "{'containers':[{'name':'app','image':'i'}]}");

        JsonNode result = admitTwice(pod);

        assertThat(result.at("/spec/serviceAccountName").asText()).isEqualTo("default");
        assertThat(result.at("/spec/volumes/0/name").asText()).isEqualTo("kube-api-access-bcdfg");
        assertThat(result.at("/spec/volumes/1")).isEqualTo(jackson(volume(PROJECTIONS)));
        assertThat(result.at("/spec/containers/0/volumeMounts/1")).isEqualTo(jackson(mount("/var/run/secrets/satoken")));
    }

    @Test
    void reinvocation_containerAddedByALaterWebhook_getsMountVolumeNotAddedTwice() throws Exception {
        JsonObject pod = pod(ANNOTATION, "{'serviceAccountName':'default','automountServiceAccountToken':false,"
                + "'containers':[{'name':'app','image':'i'}]}");
        JsonNode first = patched(pod, mutation.review(podCreate(pod)));
        ((ArrayNode) first.at("/spec/containers")).add(jackson("{'name':'sidecar','image':'s'}"));

        Verdict again = mutation.review(podCreate(gson(first)));

        assertThat(again).isNotInstanceOf(Verdict.Denied.class);
        assertThat(JsonParser.parseString(((Verdict.Patched) again).patch()).getAsJsonArray()).hasSize(1);
        JsonNode second = patched(gson(first), again);
        assertThat(second.at("/spec/containers/1/volumeMounts")).isEqualTo(jackson("[" + mount("/var/run/secrets/satoken")
                + "]"));
        assertThat(second.at("/spec/volumes")).isEqualTo(jackson("[" + volume(PROJECTIONS) + "]"));
    }

    @Test
    void pod_spellsOutTheWebhooksOwnVolume_getsOnlyTheMounts() throws Exception {
        JsonObject pod = pod(ANNOTATION, "{'serviceAccountName':'default','automountServiceAccountToken':false,"
                + "'containers':[{'name':'app','image':'i'}],'volumes':[" + volume(PROJECTIONS) + "]}");

        JsonNode result = admitTwice(pod);

        assertThat(result.at("/spec/volumes")).isEqualTo(jackson("[" + volume(PROJECTIONS) + "]"));
        assertThat(result.at("/spec/containers/0/volumeMounts")).isEqualTo(jackson("[" + mount("/var/run/secrets/satoken")
                + "]"));
    }

    @Test
    void annotation_invalid_deniedWithTheAgentsMessage() throws Exception {
        String value = "[{path: ../escape, expirationSeconds: 60}]";
        JsonObject pod = pod("{'satoken.io/projections':'" + value + "'}", "{'containers':[{'name':'app','image':'i'}]}");
        String agentMessage = null;
        try {
            ProjectionAnnotation.parse(value);
        } catch (InvalidProjectionException e) {
            agentMessage = e.getMessage();
        }

        Verdict verdict = mutation.review(podCreate(pod));

        assertThat(agentMessage).contains("satoken.io/projections[0].path").contains("expirationSeconds");
        assertThat(verdict.allowed()).isFalse();
        assertThat(denied(verdict).code()).isEqualTo(422);
        assertThat(denied(verdict).message()).isEqualTo(agentMessage);
    }

    @Test
    void mountPath_takenByAnotherVolume_refused() throws Exception {
        JsonObject pod = pod(ANNOTATION, "{'containers':[{'name':'app','image':'i','volumeMounts':[{'name':'x',"
                + "'mountPath':'/var/run/secrets/satoken'}]}],'volumes':[{'name':'x','emptyDir':{}}]}");

        Verdict verdict = mutation.review(podCreate(pod));

        assertThat(verdict.allowed()).isFalse();
        assertThat(denied(verdict).message()).startsWith("spec.containers[0].volumeMounts: /var/run/secrets/satoken is "
                + "already the mount path of volume x");
    }

    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {"{'hostPath':{'path':'/var/lib/kubelet/pods'}}", "{'emptyDir':{}}",
        "{'csi':{'driver':'secrets-store.csi.k8s.io','readOnly':true}}"})
    void reservedVolumeName_anotherSource_refused(String source) throws Exception {
        ObjectNode volume = (ObjectNode) jackson(source);
        volume.put("name", "satoken-agent-tokens");
        JsonObject pod = pod(ANNOTATION, "{'containers':[{'name':'app','image':'i'}],'volumes':["
                + volume.toString().replace('"', '\'') + "]}");

        Verdict verdict = mutation.review(podCreate(pod));

        assertThat(verdict.allowed()).isFalse();
        assertThat(denied(verdict).code()).isEqualTo(422);
        assertThat(denied(verdict).message()).isEqualTo("spec.volumes[satoken-agent-tokens]: the name is reserved for the "
                + "agent's token volume (csi driver tokens.satoken.io)");
    }

    @Test
    void reservedVolume_asksForOtherTokensThanTheAnnotation_refused() throws Exception {
        JsonObject pod = pod(ANNOTATION, "{'containers':[{'name':'app','image':'i'}],'volumes':["
                + volume("[{path: vault/token, audience: other}]") + "]}");

        Verdict verdict = mutation.review(podCreate(pod));

        assertThat(verdict.allowed()).isFalse();
        assertThat(denied(verdict).message()).startsWith("spec.volumes[satoken-agent-tokens].csi: must be {driver: "
                + "tokens.satoken.io, readOnly: true, volumeAttributes: {projections: <the satoken.io/projections "
                + "annotation>, and the reload annotations' attributes}}");
    }

    @Test
    void reservedVolume_writable_refused() throws Exception {
        JsonObject pod = pod(ANNOTATION, "{'containers':[{'name':'app','image':'i'}],'volumes':["
                + volume(PROJECTIONS).replace("'readOnly':true", "'readOnly':false") + "]}");

        Verdict verdict = mutation.review(podCreate(pod));

        assertThat(verdict.allowed()).isFalse();
        assertThat(denied(verdict).message()).startsWith("spec.volumes[satoken-agent-tokens].csi: must be");
    }

    @ParameterizedTest(name = "\"{0}\"")
    @ValueSource(strings = {"tokens", "/a/../etc", "/", ""})
    void mountPath_relativeOrDotted_refused(String path) throws Exception {
        JsonObject pod = pod("{'satoken.io/projections':'[{path: t}]','satoken.io/mount-path':'" + path + "'}",
                "{'containers':[{'name':'app','image':'i'}]}");

        Verdict verdict = mutation.review(podCreate(pod));

        assertThat(verdict.allowed()).isFalse();
        assertThat(denied(verdict).message()).startsWith("satoken.io/mount-path: must");
    }

    @Test
    void pod_withoutTheAnnotationOrMirror_notInjected() throws Exception {
        JsonObject plain = pod("{'automountServiceAccountToken':false,'serviceAccountName':'default',"
                + "'containers':[{'name':'app','image':'i'}]}");
        // AD-2: a mirror pod is the kubelet's own copy of a static pod; it is never mutated
        JsonObject mirror = pod("{'kubernetes.io/config.mirror':'x','satoken.io/projections':'[{path: t}]'}",
                "{'containers':[{'name':'app','image':'i'}]}");

        assertThat(mutation.review(podCreate(plain))).isInstanceOf(Verdict.Allowed.class);
        assertThat(mutation.review(podCreate(mirror))).isInstanceOf(Verdict.Allowed.class);
    }

    @Test
    void ephemeralContainerUpdate_notInjected() throws Exception {
        JsonObject pod = pod(ANNOTATION, "{'serviceAccountName':'default','containers':[{'name':'app','image':'i'}],"
                + "'ephemeralContainers':[{'name':'debug','image':'i'}]}");

        Verdict verdict = mutation.review(request("UPDATE", "pods", "ephemeralcontainers", pod));

        assertThat(verdict).isInstanceOf(Verdict.Allowed.class);
    }

    /** Admits, applies the patch, and checks that admitting the result again adds nothing (AD-7a). */
    private JsonNode admitTwice(JsonObject pod) throws Exception {
        Verdict verdict = mutation.review(podCreate(pod));
        assertThat(verdict).isNotInstanceOf(Verdict.Denied.class);
        JsonNode result = patched(pod, verdict);
        Verdict again = mutation.review(podCreate(gson(result)));
        assertThat(again).isInstanceOf(Verdict.Allowed.class);
        return result;
    }
}
