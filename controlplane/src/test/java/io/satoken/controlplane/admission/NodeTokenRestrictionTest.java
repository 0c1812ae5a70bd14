package io.satoken.controlplane.admission;

import static io.satoken.controlplane.admission.AdmissionFixtures.json;
import static org.assertj.core.api.Assertions.assertThat;

import com.google.gson.JsonObject;
import io.kubernetes.client.openapi.ApiException;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/** NT-1..NT-5: the agent's token requests are confined to pods on its own node, as their own ServiceAccount. */
class NodeTokenRestrictionTest {

    static final String AGENT = "system:serviceaccount:satoken-agent:satoken-agent";

    final Map<String, PodFacts> pods = new HashMap<>();
    int gets;
    final NodeTokenRestriction restriction = new NodeTokenRestriction(
            new NodeTokenRestriction.AgentAccount("satoken-agent", "satoken-agent"),
            new PodFactsLookup((namespace, name) -> {
                gets++;
                return Optional.ofNullable(pods.get(namespace + "/" + name));
            }));

    NodeTokenRestrictionTest() {
        pods.put("satoken-agent/agent-a", new PodFacts("satoken-agent", "agent-a", "uid-agent-a", "node-a", "satoken-agent"));
        pods.put("ns/web", new PodFacts("ns", "web", "uid-web", "node-a", "web"));
        pods.put("ns/far", new PodFacts("ns", "far", "uid-far", "node-b", "web"));
        pods.put("ns/pending", new PodFacts("ns", "pending", "uid-pending", "", "web"));
    }

    static AdmissionRequest tokenRequest(String user, Map<String, List<String>> extra, String account, String ref) {
        JsonObject object = json("{'apiVersion':'authentication.k8s.io/v1','kind':'TokenRequest','spec':{"
                + "'audiences':['vault']" + (ref == null ? "" : ",'boundObjectRef':" + ref) + "}}");
        return new AdmissionRequest("uid-1", new AdmissionRequest.GroupVersionResource("", "v1", "serviceaccounts"),
                "token", "CREATE", "ns", account, new AdmissionRequest.UserInfo(user, "", List.of(), extra), object,
                false);
    }

    static Map<String, List<String>> agentPod(String name, String uid) {
        return Map.of(NodeTokenRestriction.POD_NAME_EXTRA, List.of(name), NodeTokenRestriction.POD_UID_EXTRA, List.of(uid));
    }

    static String podRef(String name, String uid) {
        return "{'kind':'Pod','apiVersion':'v1','name':'" + name + "'" + (uid == null ? "" : ",'uid':'" + uid + "'") + "}";
    }

    @Test
    void agent_may_request_a_token_for_a_pod_on_its_node_as_the_pods_account() throws Exception {
        Verdict verdict = restriction.review(tokenRequest(AGENT, agentPod("agent-a", "uid-agent-a"), "web",
                podRef("web", "uid-web")));

        assertThat(verdict.allowed()).as(verdict.message()).isTrue();
        assertThat(verdict.patch()).isNull();
    }

    @Test
    void bound_pods_are_remembered_by_uid() throws Exception {
        AdmissionRequest request = tokenRequest(AGENT, agentPod("agent-a", "uid-agent-a"), "web", podRef("web", "uid-web"));
        restriction.review(request);
        int first = gets;

        assertThat(restriction.review(request).allowed()).isTrue();
        assertThat(first).isEqualTo(2);
        assertThat(gets).isEqualTo(2);
    }

    @Test
    void NT_1_requester_without_a_pod_bound_token_is_denied() throws Exception {
        Verdict verdict = restriction.review(tokenRequest(AGENT, Map.of(), "web", podRef("web", "uid-web")));

        assertThat(verdict.allowed()).isFalse();
        assertThat(verdict.code()).isEqualTo(403);
        assertThat(verdict.message()).contains("NT-1").contains("not bound to a pod");
    }

    @Test
    void NT_1_requester_pod_with_another_uid_is_denied() throws Exception {
        Verdict verdict = restriction.review(tokenRequest(AGENT, agentPod("agent-a", "uid-old-agent"), "web",
                podRef("web", "uid-web")));

        assertThat(verdict.allowed()).isFalse();
        assertThat(verdict.message()).contains("NT-1").contains("satoken-agent/agent-a (uid uid-old-agent) does not exist");
    }

    @Test
    void NT_2_token_not_bound_to_a_pod_is_denied() throws Exception {
        Verdict unbound = restriction.review(tokenRequest(AGENT, agentPod("agent-a", "uid-agent-a"), "web", null));
        Verdict secret = restriction.review(tokenRequest(AGENT, agentPod("agent-a", "uid-agent-a"), "web",
                "{'kind':'Secret','apiVersion':'v1','name':'s'}"));

        assertThat(unbound.message()).endsWith("NT-2: spec.boundObjectRef must name a Pod, got none");
        assertThat(secret.message()).endsWith("NT-2: spec.boundObjectRef must name a Pod, got kind \"Secret\"");
    }

    @Test
    void NT_3_missing_pod_or_stale_uid_is_denied() throws Exception {
        Verdict missing = restriction.review(tokenRequest(AGENT, agentPod("agent-a", "uid-agent-a"), "web",
                podRef("nope", null)));
        Verdict stale = restriction.review(tokenRequest(AGENT, agentPod("agent-a", "uid-agent-a"), "web",
                podRef("web", "uid-previous-web")));

        assertThat(missing.message()).endsWith("NT-3: spec.boundObjectRef: pod ns/nope does not exist");
        assertThat(stale.message()).endsWith("NT-3: spec.boundObjectRef: pod ns/web with uid uid-previous-web does not exist");
    }

    @Test
    void NT_4_pod_on_another_node_is_denied() throws Exception {
        Verdict verdict = restriction.review(tokenRequest(AGENT, agentPod("agent-a", "uid-agent-a"), "web",
                podRef("far", "uid-far")));

        assertThat(verdict.allowed()).isFalse();
        assertThat(verdict.message()).isEqualTo("node-scoped token request by " + AGENT + " denied: NT-4: pod ns/far "
                + "is on node node-b, but the agent pod satoken-agent/agent-a is on node node-a");
    }

    @Test
    void NT_4_unscheduled_pod_is_denied() throws Exception {
        Verdict verdict = restriction.review(tokenRequest(AGENT, agentPod("agent-a", "uid-agent-a"), "web",
                podRef("pending", null)));

        assertThat(verdict.message()).contains("NT-4: pod ns/pending is not bound to a node");
    }

    @Test
    void NT_5_token_for_another_service_account_is_denied() throws Exception {
        Verdict verdict = restriction.review(tokenRequest(AGENT, agentPod("agent-a", "uid-agent-a"), "admin",
                podRef("web", "uid-web")));

        assertThat(verdict.message()).endsWith("NT-5: pod ns/web runs as ServiceAccount web, not admin");
    }

    @Test
    void other_requesters_and_other_requests_are_not_checked() throws Exception {
        Verdict kubelet = restriction.review(tokenRequest("system:node:node-a", Map.of(), "admin", podRef("far", null)));
        AdmissionRequest update = new AdmissionRequest("u", new AdmissionRequest.GroupVersionResource("", "v1",
                "serviceaccounts"), "", "UPDATE", "ns", "web", new AdmissionRequest.UserInfo(AGENT, "", List.of(),
                Map.of()), json("{}"), false);

        assertThat(kubelet.allowed()).isTrue();
        assertThat(restriction.review(update).allowed()).isTrue();
        assertThat(gets).isZero();
    }

    @Test
    void unreadable_pod_is_denied_as_unavailable() throws Exception {
        NodeTokenRestriction failing = new NodeTokenRestriction(
                new NodeTokenRestriction.AgentAccount("satoken-agent", "satoken-agent"),
                new PodFactsLookup((namespace, name) -> {
                    throw new ApiException(503, "injected");
                }));

        Verdict verdict = failing.review(tokenRequest(AGENT, agentPod("agent-a", "uid-agent-a"), "web",
                podRef("web", null)));

        assertThat(verdict.allowed()).isFalse();
        assertThat(verdict.code()).isEqualTo(503);
        assertThat(verdict.message()).endsWith("could not read a pod: 503 injected");
    }

    @Test
    void agent_account_flag_must_be_namespace_slash_name() {
        for (String bad : new String[] {"agent", "/agent", "ns/", "a/b/c"}) {
            org.assertj.core.api.Assertions.assertThatThrownBy(
                    () -> NodeTokenRestriction.AgentAccount.parse("--agent-service-account", bad))
                    .hasMessage("--agent-service-account: expected NAMESPACE/NAME, got \"" + bad + "\"");
        }
    }
}
