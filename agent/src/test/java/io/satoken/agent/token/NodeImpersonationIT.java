package io.satoken.agent.token;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.google.gson.JsonObject;
import com.google.gson.JsonParser;
import com.nimbusds.jwt.JWTClaimsSet;
import com.nimbusds.jwt.SignedJWT;
import io.kubernetes.client.openapi.ApiClient;
import io.kubernetes.client.openapi.apis.CoreV1Api;
import io.kubernetes.client.openapi.models.AuthenticationV1TokenRequest;
import io.kubernetes.client.openapi.models.V1BoundObjectReference;
import io.kubernetes.client.openapi.models.V1CSIVolumeSource;
import io.kubernetes.client.openapi.models.V1Container;
import io.kubernetes.client.openapi.models.V1Namespace;
import io.kubernetes.client.openapi.models.V1Node;
import io.kubernetes.client.openapi.models.V1ObjectMeta;
import io.kubernetes.client.openapi.models.V1Pod;
import io.kubernetes.client.openapi.models.V1PodSpec;
import io.kubernetes.client.openapi.models.V1TokenRequestSpec;
import io.kubernetes.client.openapi.models.V1Volume;
import io.satoken.agent.testing.TokenRequestAudit;
import io.satoken.common.kube.KubeClients;
import io.satoken.common.kube.RateLimiter;
import io.satoken.common.testing.KubeApiServer;
import io.satoken.common.testing.Manifests;
import io.satoken.common.testing.RequiresKubeApiServer;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Node impersonation on a real kube-apiserver 1.36+ with the node authorizer and NodeRestriction, as a cluster runs
 * them, and the profile's RBAC (deploy/profiles/node-impersonation) applied from its files: the agent's own credential
 * is a token bound to a stand-in agent pod on node n1, so it names n1, and the agent's clients are built as
 * {@code run} builds them. Pods on n1 and n2 ask for tokens with a satoken CSI volume. The API server, not satoken,
 * decides each case; its audit log says under which user each TokenRequest ran.
 *
 * <p>Skipped, loudly, on an API server older than 1.36 (no constrained impersonation on by default): it runs in the
 * second tier ({@code kube-next}).
 */
@RequiresKubeApiServer
class NodeImpersonationIT {

    static final String AGENT_NAMESPACE = "satoken-system";
    static final String AGENT = "satoken-agent";
    static final String AGENT_USER = "system:serviceaccount:" + AGENT_NAMESPACE + ":" + AGENT;
    /** An audience of the shipped grant (token-audiences.yaml). */
    static final String LISTED = "https://vault.example.com";
    static final Path PROFILE = Path.of("../deploy/profiles/node-impersonation");
    static final Pattern VERSION = Pattern.compile("v1\\.(\\d+)\\.");

    @TempDir
    static Path dir;

    static KubeApiServer server;
    static CoreV1Api admin;
    static String namespace;
    static V1Pod near;
    static V1Pod far;
    static Path kubeconfig;
    static Path auditLog;

    @BeforeAll
    static void start() throws Exception {
        String version = binaryVersion();
        Matcher m = VERSION.matcher(version);
        if (!m.find() || Integer.parseInt(m.group(1)) < NodeImpersonationProbe.DEFAULT_ON_MINOR) {
            System.err.println("*** SKIPPED NodeImpersonationIT: kube-apiserver " + version + " from "
                    + KubeApiServer.assetsDir() + " has no constrained impersonation on by default (1.36+); it runs in"
                    + " the v1.36 tier ***");
            Assumptions.abort("kube-apiserver " + version + " is older than 1.36");
        }
        Path policy = TokenRequestAudit.writePolicy(dir.resolve("audit-policy.yaml"));
        auditLog = dir.resolve("audit.log");
        server = KubeApiServer.builder()
                .flag("--authorization-mode", "Node,RBAC")
                .flag("--enable-admission-plugins", "NodeRestriction")
                .flag("--audit-policy-file", policy.toString())
                .flag("--audit-log-path", auditLog.toString())
                .build().start();
        admin = new CoreV1Api(server.adminClient());

        for (String node : List.of("n1", "n2")) {
            admin.createNode(new V1Node().metadata(new V1ObjectMeta().name(node))).execute();
        }
        // NodeRestriction looks up the CSI driver of a pod's volume when it checks the audience
        Manifests.apply(server, Path.of("deploy/25-csidriver.yaml"));
        admin.createNamespace(new V1Namespace().metadata(new V1ObjectMeta().name(AGENT_NAMESPACE))).execute();
        Manifests.apply(server, Path.of("deploy/identity/serviceaccount.yaml"));
        // the profile's ClusterRole first: the base's file then adds only its binding (Manifests keeps what exists)
        Manifests.apply(server, PROFILE.resolve("rbac.yaml"));
        Manifests.apply(server, Path.of("deploy/10-rbac.yaml"));
        Manifests.apply(server, PROFILE.resolve("token-audiences.yaml"));

        namespace = server.createNamespace("app");
        server.createServiceAccount(namespace, "web");
        near = admin.createNamespacedPod(namespace, pod("near", "n1", "web", true)).execute();
        far = admin.createNamespacedPod(namespace, pod("far", "n2", "web", true)).execute();

        // the agent: a pod on n1, and its credential a token bound to that pod, as the DaemonSet's projected token is
        V1Pod agentPod = admin.createNamespacedPod(AGENT_NAMESPACE, pod("satoken-agent-n1", "n1", AGENT, false))
                .execute();
        String token = admin.createNamespacedServiceAccountToken(AGENT, AGENT_NAMESPACE,
                new AuthenticationV1TokenRequest().spec(new V1TokenRequestSpec().expirationSeconds(3600L)
                        .audiences(List.of(KubeApiServer.ISSUER)).boundObjectRef(boundTo(agentPod))))
                .execute().getStatus().getToken();
        kubeconfig = dir.resolve("kubeconfig");
        server.writeKubeconfig(kubeconfig, token);
        assertThat(SignedJWT.parse(token).getJWTClaimsSet().getJSONObjectClaim("kubernetes.io"))
                .as("the agent's token's kubernetes.io claim").containsKey("node");
    }

    @AfterAll
    static void stop() {
        if (server != null) {
            server.close();
        }
    }

    @Test
    void probe_serverActsAsTheAgentsNode_agentStartsConfined() throws Exception {
        ApiClient own = KubeClients.fromFlags(kubeconfig);

        String reason = NodeImpersonationProbe.check(NodeImpersonationProbe.api(own, asNode("n1")), "n1");

        assertThat(reason).startsWith("TokenRequests are made as system:node:n1 through constrained impersonation"
                + " (kube-apiserver " + server.gitVersion() + " answered as system:node:n1 for " + AGENT_USER + ")");
    }

    @Test
    void tokenForAPodOnItsNode_issued_asThatPodsBoundToken() throws Exception {
        TokenRequestSource source = new TokenRequestSource(asNode("n1"), RateLimiter.defaults());

        IssuedToken issued = awaitNodeGraph(() -> source.issue(key(near, LISTED)));

        JWTClaimsSet claims = SignedJWT.parse(issued.token()).getJWTClaimsSet();
        assertThat(claims.getSubject()).isEqualTo("system:serviceaccount:" + namespace + ":web");
        assertThat(claims.getAudience()).containsExactly(LISTED);
        Map<String, Object> kubernetes = claims.getJSONObjectClaim("kubernetes.io");
        assertThat(kubernetes.get("pod")).isEqualTo(Map.of("name", "near", "uid", near.getMetadata().getUid()));
        assertThat(((Map<?, ?>) kubernetes.get("node")).get("name")).isEqualTo("n1");

        JsonObject event = awaitAudit(near);
        assertThat(event.getAsJsonObject("user").get("username").getAsString()).isEqualTo(AGENT_USER);
        assertThat(event.getAsJsonObject("impersonatedUser").get("username").getAsString()).isEqualTo("system:node:n1");
        assertThat(event.getAsJsonObject("impersonatedUser").get("groups").toString())
                .isEqualTo("[\"system:nodes\",\"system:authenticated\"]");
        assertThat(event.getAsJsonObject("authenticationMetadata").get("impersonationConstraint").getAsString())
                .isEqualTo("impersonate:associated-node");
    }

    @Test
    void tokenForAPodOnAnotherNode_refusedByNodeRestriction() throws Exception {
        TokenRequestSource source = new TokenRequestSource(asNode("n1"), RateLimiter.defaults());
        awaitNodeGraph(() -> source.issue(key(near, LISTED))); // n1's pods are known to the node authorizer

        assertThatThrownBy(() -> source.issue(key(far, LISTED))).isInstanceOfSatisfying(TokenSourceException.class,
                e -> {
                    assertThat(e.permanent()).isTrue();
                    assertThat(e.getMessage()).contains("403 Forbidden").contains("node requested token bound to a pod"
                            + " scheduled on a different node");
                });
    }

    @Test
    void audienceTheNodesAreNotGranted_refusedByNodeRestriction() throws Exception {
        TokenRequestSource source = new TokenRequestSource(asNode("n1"), RateLimiter.defaults());
        awaitNodeGraph(() -> source.issue(key(near, LISTED)));

        assertThatThrownBy(() -> source.issue(key(near, "vault"))).isInstanceOfSatisfying(TokenSourceException.class,
                e -> assertThat(e.getMessage()).contains("403 Forbidden").contains("audience \"vault\" not found in pod"
                        + " spec volume, system:node:n1 is not authorized to request tokens for this audience"));
    }

    @Test
    void withoutImpersonation_theAgentsOwnCredentialMintsNothing() throws Exception {
        TokenRequestSource source = new TokenRequestSource(KubeClients.fromFlags(kubeconfig), RateLimiter.defaults());

        assertThatThrownBy(() -> source.issue(key(near, LISTED))).isInstanceOfSatisfying(TokenSourceException.class,
                e -> assertThat(e.getMessage()).contains("403 Forbidden").contains("User \"" + AGENT_USER
                        + "\" cannot create resource \"serviceaccounts/token\""));
    }

    @Test
    void actingAsAnotherNode_refused_andTheProbeSaysWhose() throws Exception {
        TokenRequestSource source = new TokenRequestSource(asNode("n2"), RateLimiter.defaults());

        assertThatThrownBy(() -> source.issue(key(far, LISTED))).isInstanceOfSatisfying(TokenSourceException.class,
                e -> assertThat(e.getMessage()).contains("403 Forbidden").contains("impersonate-on:arbitrary-node:create"));
        assertThatThrownBy(() -> NodeImpersonationProbe.check(
                NodeImpersonationProbe.api(KubeClients.fromFlags(kubeconfig), asNode("n2")), "n2"))
                .isInstanceOf(NodeImpersonationProbe.Unavailable.class)
                .hasMessageContaining("(Kubernetes " + server.gitVersion() + ")")
                .hasMessageContaining("belongs to a pod on node n1, not on this node (--node-name n2)");
    }

    // --- helpers ---------------------------------------------------------------------------------

    /** The agent's TokenRequest client, as {@code run} builds it. */
    static ApiClient asNode(String node) throws IOException {
        return NodeImpersonation.asNode(KubeClients.fromFlags(kubeconfig), node);
    }

    static TokenKey key(V1Pod pod, String audience) {
        return new TokenKey(namespace, "web", List.of(audience), 3600,
                BoundObjectRef.pod(pod.getMetadata().getName(), pod.getMetadata().getUid()));
    }

    interface Issue {
        IssuedToken run() throws TokenSourceException;
    }

    /**
     * The node authorizer learns of new pods from its informers, a moment after they are created: until then it
     * refuses n1's TokenRequests ("no relationship found between node 'n1' and this object").
     */
    static IssuedToken awaitNodeGraph(Issue issue) throws TokenSourceException {
        Awaitility.await().atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(200)).until(() -> {
            try {
                issue.run();
                return true;
            } catch (TokenSourceException e) {
                if (e.getMessage().contains("no relationship found between node")) {
                    return false;
                }
                throw e;
            }
        });
        return issue.run();
    }

    /** The audit event of the last successful TokenRequest bound to {@code pod}'s ServiceAccount, once written. */
    static JsonObject awaitAudit(V1Pod pod) {
        return Awaitility.await().atMost(Duration.ofSeconds(10)).pollInterval(Duration.ofMillis(100))
                .until(() -> lastTokenEvent(), Optional::isPresent).get();
    }

    static Optional<JsonObject> lastTokenEvent() throws IOException {
        if (!Files.exists(auditLog)) {
            return Optional.empty();
        }
        JsonObject last = null;
        for (String line : Files.readAllLines(auditLog, StandardCharsets.UTF_8)) {
            JsonObject event = JsonParser.parseString(line).getAsJsonObject();
            JsonObject ref = event.getAsJsonObject("objectRef");
            JsonObject status = event.getAsJsonObject("responseStatus");
            if (ref != null && "token".equals(str(ref, "subresource")) && namespace.equals(str(ref, "namespace"))
                    && "web".equals(str(ref, "name")) && status != null && status.get("code").getAsInt() == 201) {
                last = event;
            }
        }
        return Optional.ofNullable(last);
    }

    static String str(JsonObject o, String field) {
        return o.has(field) ? o.get(field).getAsString() : null;
    }

    static V1Pod pod(String name, String node, String serviceAccount, boolean tokenVolume) {
        V1PodSpec spec = new V1PodSpec().nodeName(node).serviceAccountName(serviceAccount).overhead(null)
                .automountServiceAccountToken(false)
                .containers(List.of(new V1Container().name("app").image("registry.invalid/app:1")));
        if (tokenVolume) {
            spec.volumes(List.of(new V1Volume().name("tokens").csi(new V1CSIVolumeSource().driver("tokens.satoken.io")
                    .readOnly(true).volumeAttributes(Map.of("audience", LISTED)))));
        }
        return new V1Pod().metadata(new V1ObjectMeta().name(name)).spec(spec);
    }

    static V1BoundObjectReference boundTo(V1Pod pod) {
        return new V1BoundObjectReference().apiVersion("v1").kind("Pod").name(pod.getMetadata().getName())
                .uid(pod.getMetadata().getUid());
    }

    /** {@code kube-apiserver --version} of the binaries the tier runs, without starting one. */
    static String binaryVersion() throws IOException, InterruptedException {
        Process p = new ProcessBuilder(KubeApiServer.assetsDir().resolve("kube-apiserver").toString(), "--version")
                .redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8).strip();
        p.waitFor();
        return out.replace("Kubernetes ", "");
    }
}
