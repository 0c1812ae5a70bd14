package io.satoken.agent.token;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.kubernetes.client.openapi.ApiClient;
import io.kubernetes.client.openapi.ApiException;
import io.kubernetes.client.openapi.models.V1UserInfo;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * When the agent may mint as its node, and what it says when it may not. The API server's answers are scripted;
 * what a real v1.36 server answers is pinned by NodeImpersonationIT.
 */
class NodeImpersonationProbeTest {

    static final String AGENT = "system:serviceaccount:satoken-system:satoken-agent";
    static final String FORBIDDEN_BODY = """
            {"kind":"Status","apiVersion":"v1","status":"Failure","reason":"Forbidden","code":403,
             "message":"nodes.authentication.k8s.io \\"n1\\" is forbidden: User \\"%s\\" cannot impersonate:associated-node resource \\"nodes\\" in API group \\"authentication.k8s.io\\" at the cluster scope"}
            """.formatted(AGENT);

    /** A scripted API server: each answer a value, or an HTTP status to fail with. */
    record Scripted(String gitVersion, int versionCode, V1UserInfo self, int selfCode, V1UserInfo asNode, int asNodeCode,
            String asNodeBody) implements NodeImpersonationProbe.Server {
        @Override
        public String version() throws ApiException {
            fail(versionCode, null);
            return gitVersion;
        }

        @Override
        public V1UserInfo reviewSelf() throws ApiException {
            fail(selfCode, null);
            return self;
        }

        @Override
        public V1UserInfo reviewAsNode() throws ApiException {
            fail(asNodeCode, asNodeBody);
            return asNode;
        }

        private static void fail(int code, String body) throws ApiException {
            if (code != 0) {
                throw new ApiException(code, Map.of(), body);
            }
        }
    }

    static V1UserInfo agentOn(String node) {
        V1UserInfo user = new V1UserInfo().username(AGENT).groups(List.of("system:serviceaccounts",
                "system:serviceaccounts:satoken-system", "system:authenticated"));
        if (node != null) {
            user.putExtraItem(NodeImpersonationProbe.NODE_NAME_EXTRA, List.of(node));
            user.putExtraItem("authentication.kubernetes.io/pod-name", List.of("satoken-agent-x7k2p"));
        }
        return user;
    }

    static V1UserInfo node(String name) {
        return new V1UserInfo().username("system:node:" + name).groups(List.of("system:nodes", "system:authenticated"));
    }

    static Scripted server(String version, V1UserInfo self, V1UserInfo asNode) {
        return new Scripted(version, 0, self, 0, asNode, 0, null);
    }

    @Test
    void serverActsAsTheAgentsNode_confined_reasonNamesNodeAndVersion() throws Exception {
        String reason = NodeImpersonationProbe.check(server("v1.36.2", agentOn("n1"), node("n1")), "n1");

        assertThat(reason).isEqualTo("TokenRequests are made as system:node:n1 through constrained impersonation"
                + " (kube-apiserver v1.36.2 answered as system:node:n1 for " + AGENT + "): the node authorizer and"
                + " NodeRestriction allow them only for pods bound to node n1");
    }

    /** A server or credential that cannot make the agent its node, and what the refusal must say. */
    record Refusal(String name, Scripted server, List<String> says) {
        @Override
        public String toString() {
            return name;
        }
    }

    static Stream<Refusal> refusals() {
        return Stream.of(
                new Refusal("v1.26: no SelfSubjectReview v1", new Scripted("v1.26.1", 0, null, 404, null, 0, null),
                        List.of("(Kubernetes v1.26.1)", "does not serve SelfSubjectReview")),
                new Refusal("v1.26: the review refused by RBAC before routing",
                        new Scripted("v1.26.1", 0, null, 403, null, 0, null),
                        List.of("(Kubernetes v1.26.1)", "does not serve SelfSubjectReview", "403 Forbidden")),
                new Refusal("v1.36: the review refused, not an old server",
                        new Scripted("v1.36.2", 0, null, 500, null, 0, null),
                        List.of("(Kubernetes v1.36.2)", "own credential failed: 500 Internal Server Error")),
                new Refusal("v1.32: forbidden, no constrained impersonation",
                        new Scripted("v1.32.13", 0, agentOn("n1"), 0, null, 403, FORBIDDEN_BODY),
                        List.of("(Kubernetes v1.32.13)", "refused to let " + AGENT + " act as system:node:n1",
                                "403 Forbidden: nodes.authentication.k8s.io \"n1\" is forbidden",
                                "Kubernetes v1.32.13 has no constrained impersonation")),
                new Refusal("v1.35: alpha, feature gate needed",
                        new Scripted("v1.35.0", 0, agentOn("n1"), 0, null, 403, FORBIDDEN_BODY),
                        List.of("(Kubernetes v1.35.0)", "--feature-gates=ConstrainedImpersonation=true")),
                new Refusal("v1.36: RBAC missing",
                        new Scripted("v1.36.2", 0, agentOn("n1"), 0, null, 403, FORBIDDEN_BODY),
                        List.of("(Kubernetes v1.36.2)", "impersonate:associated-node",
                                "deploy/profiles/node-impersonation", "must be bound to " + AGENT)),
                new Refusal("credential names no node", server("v1.36.2", agentOn(null), node("n1")),
                        List.of("user " + AGENT + ") names no node", NodeImpersonationProbe.NODE_NAME_EXTRA,
                                "bound to a pod on this node")),
                new Refusal("credential of a pod on another node", server("v1.36.2", agentOn("n2"), node("n2")),
                        List.of("belongs to a pod on node n2, not on this node (--node-name n1)")),
                new Refusal("header dropped on the way", server("v1.36.2", agentOn("n1"), agentOn("n1")),
                        List.of("answered for " + AGENT, "Impersonate-User header does not reach the API server")),
                new Refusal("no /version", new Scripted(null, 503, null, 0, null, 0, null),
                        List.of("(Kubernetes unknown)", "GET /version: 503 Service Unavailable")));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("refusals")
    void unsupported_refusesToStart_namingVersionWhatWasFoundAndTheAlternatives(Refusal c) {
        assertThatThrownBy(() -> NodeImpersonationProbe.check(c.server(), "n1"))
                .isInstanceOf(NodeImpersonationProbe.Unavailable.class)
                .hasMessageStartingWith("tokenSource: node-impersonation cannot be used with this API server")
                .hasMessageContaining("does not fall back to minting tokens with its own credential")
                .hasMessageContaining("tokenSource: request, with satoken's token webhook installed")
                .hasMessageContaining("tokenSource: kubelet")
                .satisfies(e -> assertThat(e.getMessage()).contains(c.says()));
    }

    @Test
    void minor_readsKubernetesOneVersions_elseMinusOne() {
        assertThat(NodeImpersonationProbe.minor("v1.36.2")).isEqualTo(36);
        assertThat(NodeImpersonationProbe.minor("v1.35.0-alpha.3+abc")).isEqualTo(35);
        assertThat(NodeImpersonationProbe.minor("v2.0.0")).isEqualTo(-1);
        assertThat(NodeImpersonationProbe.minor("unknown")).isEqualTo(-1);
        assertThat(NodeImpersonationProbe.minor(null)).isEqualTo(-1);
    }

    @Test
    void asNode_sendsOnlyTheUserName_noGroup() throws Exception {
        ApiClient client = NodeImpersonation.asNode(new ApiClient(), "n1");

        okhttp3.Request request = client.buildRequest(client.getBasePath(), "/version", "GET", List.of(), List.of(),
                null, new java.util.HashMap<>(), Map.of(), Map.of(), new String[0], null);
        assertThat(request.headers("Impersonate-User")).containsExactly("system:node:n1");
        assertThat(request.headers().names()).noneMatch(h -> h.toLowerCase(java.util.Locale.ROOT).startsWith("impersonate-")
                && !h.equalsIgnoreCase("Impersonate-User"));
    }

    @Test
    void asNode_withoutANodeName_refused() {
        assertThatThrownBy(() -> NodeImpersonation.asNode(new ApiClient(), " "))
                .hasMessageContaining("--node-name");
    }
}
