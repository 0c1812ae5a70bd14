package io.satoken.controlplane.admission;

import static io.satoken.controlplane.admission.AdmissionFixtures.jackson;
import static io.satoken.controlplane.admission.AdmissionFixtures.patched;
import static io.satoken.controlplane.admission.AdmissionFixtures.pod;
import static io.satoken.controlplane.admission.AdmissionFixtures.podCreate;
import static org.assertj.core.api.Assertions.assertThat;

import com.google.gson.JsonObject;
import org.junit.jupiter.api.Test;

/**
 * {@code /mutate/pods/agent-tokens}, the injection-only path: kube-apiserver's own ServiceAccount plugin has admitted
 * the pod, so the webhook adds the agent's token volume and nothing else. It reads no ServiceAccount, so a pod whose
 * ServiceAccount the webhook could not find (or has not cached) is not refused for it.
 */
class AgentTokensOnlyTest {

    final Admission mutation = AdmissionFixtures.checkedThroughReader(
            PodMutation.agentTokensOnly(new AgentTokenInjection()));

    @Test
    void annotatedPod_getsOnlyTheTokenVolume_noServiceAccountDefaultNorApiTokenMount() throws Exception {
        JsonObject pod = pod(AgentTokenInjectionTest.ANNOTATION, "{'containers':[{'name':'app','image':'i'}]}");

        Verdict verdict = mutation.review(podCreate(pod));

        assertThat(patched(pod, verdict).get("spec")).isEqualTo(jackson("{'containers':[{'name':'app','image':'i',"
                + "'volumeMounts':[" + AgentTokenInjectionTest.mount("/var/run/secrets/satoken") + "]}],"
                + "'volumes':[" + AgentTokenInjectionTest.volume(AgentTokenInjectionTest.PROJECTIONS) + "]}"));
    }

    @Test
    void podWithoutTheAnnotation_isAllowedUnchanged_whateverItsServiceAccount() throws Exception {
        JsonObject pod = pod("{'serviceAccountName':'no-such-account','containers':[{'name':'app','image':'i'}]}");

        Verdict verdict = mutation.review(podCreate(pod));

        assertThat(verdict).isInstanceOf(Verdict.Allowed.class);
    }
}
