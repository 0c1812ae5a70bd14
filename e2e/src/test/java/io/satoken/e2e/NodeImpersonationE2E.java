package io.satoken.e2e;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.google.gson.JsonObject;
import com.google.gson.JsonParser;
import com.nimbusds.jwt.JWTClaimsSet;
import com.nimbusds.jwt.SignedJWT;
import io.kubernetes.client.openapi.apis.CoreV1Api;
import io.kubernetes.client.openapi.models.V1CSIVolumeSource;
import io.kubernetes.client.openapi.models.V1Capabilities;
import io.kubernetes.client.openapi.models.V1Container;
import io.kubernetes.client.openapi.models.V1Node;
import io.kubernetes.client.openapi.models.V1ObjectMeta;
import io.kubernetes.client.openapi.models.V1Pod;
import io.kubernetes.client.openapi.models.V1PodSecurityContext;
import io.kubernetes.client.openapi.models.V1PodSpec;
import io.kubernetes.client.openapi.models.V1ProjectedVolumeSource;
import io.kubernetes.client.openapi.models.V1SeccompProfile;
import io.kubernetes.client.openapi.models.V1SecurityContext;
import io.kubernetes.client.openapi.models.V1ServiceAccountTokenProjection;
import io.kubernetes.client.openapi.models.V1Volume;
import io.kubernetes.client.openapi.models.V1VolumeMount;
import io.kubernetes.client.openapi.models.V1VolumeProjection;
import io.satoken.agent.token.BoundObjectRef;
import io.satoken.agent.token.NodeImpersonation;
import io.satoken.agent.token.TokenKey;
import io.satoken.agent.token.TokenRequestSource;
import io.satoken.agent.token.TokenSourceException;
import io.satoken.common.kube.KubeClients;
import io.satoken.common.kube.RateLimiter;
import io.satoken.e2e.node.ExecResult;
import io.satoken.e2e.node.KubeletNode;
import io.satoken.e2e.node.RunningPod;
import io.satoken.e2e.node.TestImages;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.parallel.Execution;
import org.junit.jupiter.api.parallel.ExecutionMode;
import org.junit.jupiter.api.parallel.ResourceLock;

/**
 * The node-impersonation profile on a real v1.36 node, with no webhook installed: the agent runs as the DaemonSet runs
 * it (its credential a token bound to its pod on the node, the profile's RBAC, {@code tokenSource: node-impersonation})
 * against an API server with the node authorizer and NodeRestriction. A restricted pod reads its satoken token, which
 * is kubelet's projected token of the same audience in the same pod but for its times and id; the API server itself
 * refuses the agent's credential a token for a pod on another node, and a token without impersonation; its audit log
 * shows the agent's TokenRequests under the node's user. Skipped, loudly, below 1.36 (the v1.36 tier runs it).
 */
@Execution(ExecutionMode.CONCURRENT) // the node lock alone orders it; see junit-platform.properties
@ResourceLock(KubeletNode.RESOURCE)
class NodeImpersonationE2E {

    private static final String TEST = "NodeImpersonationE2E";
    private static final String AUDIENCE = "vault";
    private static final long LIFETIME = 3600;
    private static final String SA = "app";
    private static final long USER = 1000;

    private static CsiDriverNode csi;
    private static KubeletNode node;
    private static String namespace;

    @BeforeAll
    static void startNodeAndAgent() throws Exception {
        csi = CsiDriverNode.startImpersonating(TEST, "impersonation-agent", List.of(AUDIENCE));
        node = csi.node();
        namespace = csi.restrictedNamespace("impersonation", SA);
    }

    @AfterAll
    static void stop() throws IOException {
        if (csi != null) {
            csi.close();
        }
    }

    @Test
    void agent_startsConfinedByTheApiServer_sayingSo() {
        String log = csi.agent().logText();

        assertThat(log).contains("node impersonation: TokenRequests are made as system:node:" + node.nodeName()
                + " through constrained impersonation (kube-apiserver v1.");
        assertThat(log).contains("token requests confined: TokenRequests are made as node " + node.nodeName());
        assertThat(csi.agent().metric("satoken_agent_token_confinement", "state=\"confined\"")).isEqualTo(1.0);
    }

    @Test
    void restrictedPod_readsItsToken_whoseClaimsAreKubeletsButForTheirTimesAndId() throws Exception {
        RunningPod app = node.runPod(namespace, pod("app"), Duration.ofSeconds(90));

        String ours = read(app, "/satoken/token");
        String theirs = read(app, "/kubelet/token");

        Map<String, Object> oursClaims = withoutTimes(SignedJWT.parse(ours).getJWTClaimsSet());
        Map<String, Object> kubeletClaims = withoutTimes(SignedJWT.parse(theirs).getJWTClaimsSet());
        assertThat(oursClaims).isEqualTo(kubeletClaims);
        assertThat(oursClaims.get("sub")).isEqualTo("system:serviceaccount:" + namespace + ":" + SA);
        assertThat(SignedJWT.parse(ours).getJWTClaimsSet().getAudience()).containsExactly(AUDIENCE);
        assertThat(oursClaims.keySet()).containsExactlyInAnyOrder("aud", "iss", "sub", "kubernetes.io");
        Map<?, ?> kubernetes = (Map<?, ?>) oursClaims.get("kubernetes.io");
        assertThat(((Map<?, ?>) kubernetes.get("node")).get("name")).isEqualTo(node.nodeName());
        assertThat(((Map<?, ?>) kubernetes.get("pod")).get("uid")).isEqualTo(app.uid());
        Figures.record(TEST, "restricted pod: satoken's token and kubelet's projected token of audience " + AUDIENCE
                + " have equal claims but iat, nbf, exp and jti (" + String.join(", ", oursClaims.keySet())
                + "); the agent requested it as system:node:" + node.nodeName());

        JsonObject event = tokenRequestEvent("app");
        assertThat(event.getAsJsonObject("user").get("username").getAsString())
                .isEqualTo("system:serviceaccount:" + AgentIdentity.NAMESPACE + ":" + AgentIdentity.SERVICE_ACCOUNT);
        assertThat(event.getAsJsonObject("impersonatedUser").get("username").getAsString())
                .isEqualTo("system:node:" + node.nodeName());
        assertThat(event.getAsJsonObject("authenticationMetadata").get("impersonationConstraint").getAsString())
                .isEqualTo("impersonate:associated-node");
    }

    @Test
    void agentsCredential_getsNoTokenForAPodOnAnotherNode_norAnyWithoutImpersonation() throws Exception {
        CoreV1Api admin = new CoreV1Api(node.adminClient());
        String other = "other-" + node.nodeName();
        admin.createNode(new V1Node().metadata(new V1ObjectMeta().name(other))).execute();
        V1Pod elsewhere = pod("elsewhere");
        elsewhere.getSpec().nodeName(other);
        elsewhere = admin.createNamespacedPod(namespace, elsewhere).execute();
        TokenKey key = new TokenKey(namespace, SA, List.of(AUDIENCE), LIFETIME,
                BoundObjectRef.pod(elsewhere.getMetadata().getName(), elsewhere.getMetadata().getUid()));

        TokenRequestSource asNode = new TokenRequestSource(
                NodeImpersonation.asNode(KubeClients.fromFlags(csi.agentKubeconfig()), node.nodeName()),
                RateLimiter.defaults());
        TokenRequestSource own = new TokenRequestSource(KubeClients.fromFlags(csi.agentKubeconfig()),
                RateLimiter.defaults());

        assertThatThrownBy(() -> asNode.issue(key)).isInstanceOfSatisfying(TokenSourceException.class,
                e -> assertThat(e.getMessage()).contains("403 Forbidden")
                        .contains("node requested token bound to a pod scheduled on a different node"));
        assertThatThrownBy(() -> own.issue(key)).isInstanceOfSatisfying(TokenSourceException.class,
                e -> assertThat(e.getMessage()).contains("403 Forbidden")
                        .contains("cannot create resource \"serviceaccounts/token\""));
        admin.deleteNamespacedPod(elsewhere.getMetadata().getName(), namespace).gracePeriodSeconds(0).execute();
    }

    // --- the pieces -----------------------------------------------------------------------------

    /** The claims with the times and the token's id taken out. */
    private static Map<String, Object> withoutTimes(JWTClaimsSet claims) {
        Map<String, Object> rest = new HashMap<>(claims.toJSONObject());
        List.of("iat", "nbf", "exp", "jti").forEach(rest::remove);
        return rest;
    }

    /** The audit event of the successful TokenRequest bound to pod {@code name}, waiting until it is written. */
    private static JsonObject tokenRequestEvent(String name) throws IOException {
        for (int tries = 0; tries < 50; tries++) {
            if (Files.exists(csi.auditLog())) {
                for (String line : Files.readAllLines(csi.auditLog(), StandardCharsets.UTF_8)) {
                    JsonObject event = JsonParser.parseString(line).getAsJsonObject();
                    JsonObject ref = event.getAsJsonObject("objectRef");
                    JsonObject status = event.getAsJsonObject("responseStatus");
                    if (ref != null && ref.has("subresource") && ref.get("subresource").getAsString().equals("token")
                            && namespace.equals(ref.get("namespace").getAsString())
                            && event.has("impersonatedUser") && status != null && status.get("code").getAsInt() == 201) {
                        return event;
                    }
                }
            }
            SatokenProcess.pause(Duration.ofMillis(200));
        }
        throw new AssertionError("no audit event of a successful TokenRequest as the node in " + namespace + " in "
                + csi.auditLog());
    }

    /** A restricted pod with kubelet's projected token and a satoken volume of the same audience and lifetime. */
    private static V1Pod pod(String name) {
        V1Container container = new V1Container().name("app").image(TestImages.BUSYBOX)
                .command(List.of("sleep", "86400"))
                .securityContext(new V1SecurityContext().allowPrivilegeEscalation(false)
                        .capabilities(new V1Capabilities().drop(List.of("ALL"))))
                .addVolumeMountsItem(new V1VolumeMount().name("satoken").mountPath("/satoken").readOnly(true))
                .addVolumeMountsItem(new V1VolumeMount().name("kubelet").mountPath("/kubelet").readOnly(true));
        V1PodSpec spec = new V1PodSpec().nodeName(node.nodeName()).serviceAccountName(SA)
                .automountServiceAccountToken(false).terminationGracePeriodSeconds(0L)
                .securityContext(new V1PodSecurityContext().runAsNonRoot(true).runAsUser(USER).fsGroup(2000L)
                        .seccompProfile(new V1SeccompProfile().type("RuntimeDefault")))
                .addVolumesItem(new V1Volume().name("satoken").csi(new V1CSIVolumeSource().driver(CsiDriverNode.DRIVER)
                        .readOnly(true).volumeAttributes(Map.of("audience", AUDIENCE,
                                "expirationSeconds", String.valueOf(LIFETIME)))))
                .addVolumesItem(new V1Volume().name("kubelet").projected(new V1ProjectedVolumeSource()
                        .addSourcesItem(new V1VolumeProjection().serviceAccountToken(new V1ServiceAccountTokenProjection()
                                .audience(AUDIENCE).expirationSeconds(LIFETIME).path("token")))))
                .addContainersItem(container);
        spec.setOverhead(null); // client-java sends "overhead": {} otherwise, which the API server refuses
        return new V1Pod().metadata(new V1ObjectMeta().name(name).namespace(namespace)).spec(spec);
    }

    /** The file's content as the container reads it; recorded so the secrets check looks for it in every log. */
    private static String read(RunningPod pod, String file) throws IOException {
        ExecResult result = node.exec(pod.namespace(), pod.name(), "app", "cat", file);
        if (!result.succeeded()) {
            throw new AssertionError("cat " + file + " in " + pod.name() + " failed (exit " + result.exitCode() + "): "
                    + result.stderr());
        }
        return IssuedTokens.record(result.stdout().strip());
    }
}
