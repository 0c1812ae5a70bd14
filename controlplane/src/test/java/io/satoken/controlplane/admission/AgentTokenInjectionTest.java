package io.satoken.controlplane.admission;

import static io.satoken.controlplane.admission.AdmissionFixtures.account;
import static io.satoken.controlplane.admission.AdmissionFixtures.gson;
import static io.satoken.controlplane.admission.AdmissionFixtures.jackson;
import static io.satoken.controlplane.admission.AdmissionFixtures.patched;
import static io.satoken.controlplane.admission.AdmissionFixtures.pod;
import static io.satoken.controlplane.admission.AdmissionFixtures.podCreate;
import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.google.gson.JsonObject;
import io.satoken.common.projection.InvalidProjectionException;
import io.satoken.common.projection.ProjectionAnnotation;
import io.satoken.controlplane.admission.ServiceAccountAdmission.TokenVolume;
import org.junit.jupiter.api.Test;

/**
 * A pod with {@code satoken.io/projections} gets the agent's directory: the hostPath volume, a read-only
 * mount with {@code subPathExpr: $(POD_UID)} and {@code POD_UID} in every init and regular container.
 * Token automount is off in these pods so that only the injection shows in the patch.
 */
class AgentTokenInjectionTest {

    static final String ANNOTATION = "{'satoken.io/projections':'[{path: vault/token, audience: vault}]'}";
    static final String VOLUME = "{'name':'satoken-agent-tokens','hostPath':{'path':'/var/lib/satoken/pods',"
            + "'type':'Directory'}}";
    static final String ENV = "{'name':'POD_UID','valueFrom':{'fieldRef':{'apiVersion':'v1','fieldPath':'metadata.uid'}}}";

    static String mount(String path) {
        return "{'name':'satoken-agent-tokens','readOnly':true,'mountPath':'" + path + "','subPathExpr':'$(POD_UID)'}";
    }

    final AdmissionFixtures.Accounts accounts = new AdmissionFixtures.Accounts().cache(account("default"));
    final PodMutation mutation = ServiceAccountAdmissionTest.mutation(accounts, TokenVolume.PROJECTED, false);

    @Test
    void annotated_pod_gets_volume_mount_and_env_in_init_and_regular_containers() throws Exception {
        JsonObject pod = pod(ANNOTATION, "{'serviceAccountName':'default','automountServiceAccountToken':false,"
                + "'initContainers':[{'name':'init','image':'i'}],'containers':[{'name':'app','image':'i',"
                + "'env':[{'name':'A','value':'1'}]}],'ephemeralContainers':[{'name':'e','image':'i'}]}");

        JsonNode result = admitTwice(pod);

        assertThat(result.get("spec")).isEqualTo(jackson("{'serviceAccountName':'default',"
                + "'automountServiceAccountToken':false,'initContainers':[{'name':'init','image':'i','volumeMounts':["
                + mount("/var/run/secrets/satoken") + "],'env':[" + ENV + "]}],'containers':[{'name':'app','image':'i',"
                + "'env':[{'name':'A','value':'1'}," + ENV + "],'volumeMounts':[" + mount("/var/run/secrets/satoken")
                + "]}],'ephemeralContainers':[{'name':'e','image':'i'}],'volumes':[" + VOLUME + "]}"));
    }

    @Test
    void mount_path_annotation_moves_the_mount() throws Exception {
        JsonObject pod = pod("{'satoken.io/projections':'[{path: t}]','satoken.io/mount-path':'/tokens'}",
                "{'automountServiceAccountToken':false,'serviceAccountName':'default','containers':[{'name':'app',"
                        + "'image':'i'}]}");

        JsonNode result = admitTwice(pod);

        assertThat(result.at("/spec/containers/0/volumeMounts")).isEqualTo(jackson("[" + mount("/tokens") + "]"));
    }

    @Test
    void both_mutations_share_one_patch_with_the_service_account_token() throws Exception {
        JsonObject pod = pod(ANNOTATION, "{'containers':[{'name':'app','image':'i'}]}");

        JsonNode result = admitTwice(pod);

        assertThat(result.at("/spec/serviceAccountName").asText()).isEqualTo("default");
        assertThat(result.at("/spec/volumes/0/name").asText()).isEqualTo("kube-api-access-bcdfg");
        assertThat(result.at("/spec/volumes/1")).isEqualTo(jackson(VOLUME));
        assertThat(result.at("/spec/containers/0/volumeMounts/1")).isEqualTo(jackson(mount("/var/run/secrets/satoken")));
    }

    @Test
    void invalid_annotation_is_denied_with_the_agents_message() throws Exception {
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
        assertThat(verdict.code()).isEqualTo(422);
        assertThat(verdict.message()).isEqualTo(agentMessage);
    }

    @Test
    void pod_uid_set_by_the_pod_is_refused_because_it_would_pick_another_pods_directory() throws Exception {
        JsonObject pod = pod(ANNOTATION, "{'containers':[{'name':'app','image':'i','env':[{'name':'POD_UID',"
                + "'value':'0d6f1e9a-other-pod'}]}]}");

        Verdict verdict = mutation.review(podCreate(pod));

        assertThat(verdict.allowed()).isFalse();
        assertThat(verdict.message()).isEqualTo("spec.containers[0].env[POD_UID]: must come from the downward API "
                + "field metadata.uid, because it selects the pod's token directory");
    }

    @Test
    void mount_path_taken_by_another_volume_is_refused() throws Exception {
        JsonObject pod = pod(ANNOTATION, "{'containers':[{'name':'app','image':'i','volumeMounts':[{'name':'x',"
                + "'mountPath':'/var/run/secrets/satoken'}]}],'volumes':[{'name':'x','emptyDir':{}}]}");

        Verdict verdict = mutation.review(podCreate(pod));

        assertThat(verdict.allowed()).isFalse();
        assertThat(verdict.message()).startsWith("spec.containers[0].volumeMounts: /var/run/secrets/satoken is "
                + "already the mount path of volume x");
    }

    @Test
    void reserved_volume_name_with_another_source_is_refused() throws Exception {
        JsonObject pod = pod(ANNOTATION, "{'containers':[{'name':'app','image':'i'}],'volumes':[{'name':"
                + "'satoken-agent-tokens','hostPath':{'path':'/etc'}}]}");

        Verdict verdict = mutation.review(podCreate(pod));

        assertThat(verdict.allowed()).isFalse();
        assertThat(verdict.message()).contains("spec.volumes[satoken-agent-tokens]");
    }

    @Test
    void relative_or_dotted_mount_path_is_refused() throws Exception {
        for (String path : new String[] {"tokens", "/a/../etc", "/", ""}) {
            JsonObject pod = pod("{'satoken.io/projections':'[{path: t}]','satoken.io/mount-path':'" + path + "'}",
                    "{'containers':[{'name':'app','image':'i'}]}");

            Verdict verdict = mutation.review(podCreate(pod));

            assertThat(verdict.allowed()).as(path).isFalse();
            assertThat(verdict.message()).as(path).startsWith("satoken.io/mount-path: must");
        }
    }

    @Test
    void pods_without_the_annotation_and_mirror_pods_are_not_injected() throws Exception {
        JsonObject plain = pod("{'automountServiceAccountToken':false,'serviceAccountName':'default',"
                + "'containers':[{'name':'app','image':'i'}]}");
        JsonObject mirror = pod("{'kubernetes.io/config.mirror':'x','satoken.io/projections':'[{path: t}]'}",
                "{'containers':[{'name':'app','image':'i'}]}");

        assertThat(mutation.review(podCreate(plain)).patch()).isNull();
        assertThat(mutation.review(podCreate(mirror)).patch()).isNull();
    }

    /** Admits, applies the patch, and checks that admitting the result again adds nothing. */
    private JsonNode admitTwice(JsonObject pod) throws Exception {
        Verdict verdict = mutation.review(podCreate(pod));
        assertThat(verdict.allowed()).as(verdict.message()).isTrue();
        JsonNode result = patched(pod, verdict);
        Verdict again = mutation.review(podCreate(gson(result)));
        assertThat(again.allowed()).as(again.message()).isTrue();
        assertThat(again.patch()).isNull();
        return result;
    }
}
