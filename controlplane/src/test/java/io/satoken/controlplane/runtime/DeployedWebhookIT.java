package io.satoken.controlplane.runtime;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.kubernetes.client.openapi.ApiClient;
import io.kubernetes.client.openapi.ApiException;
import io.kubernetes.client.openapi.apis.AdmissionregistrationV1Api;
import io.kubernetes.client.openapi.apis.CoreV1Api;
import io.kubernetes.client.openapi.apis.VersionApi;
import io.kubernetes.client.openapi.models.AdmissionregistrationV1WebhookClientConfig;
import io.kubernetes.client.openapi.models.AuthenticationV1TokenRequest;
import io.kubernetes.client.openapi.models.V1BoundObjectReference;
import io.kubernetes.client.openapi.models.V1Container;
import io.kubernetes.client.openapi.models.V1Deployment;
import io.kubernetes.client.openapi.models.V1MatchCondition;
import io.kubernetes.client.openapi.models.V1MutatingWebhookConfiguration;
import io.kubernetes.client.openapi.models.V1Namespace;
import io.kubernetes.client.openapi.models.V1ObjectMeta;
import io.kubernetes.client.openapi.models.V1Pod;
import io.kubernetes.client.openapi.models.V1PodSpec;
import io.kubernetes.client.openapi.models.V1TokenRequestSpec;
import io.kubernetes.client.openapi.models.V1ValidatingWebhookConfiguration;
import io.kubernetes.client.openapi.models.V1Volume;
import io.kubernetes.client.util.Yaml;
import io.satoken.common.testing.KubeApiServer;
import io.satoken.common.testing.Manifests;
import io.satoken.common.testing.RequiresKubeApiServer;
import io.satoken.controlplane.webhook.TestCertificates;
import io.satoken.controlplane.testing.ApiServerClientCertificate;
import io.satoken.controlplane.testing.DeployedManifests;
import java.io.IOException;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;

/**
 * The webhook as {@code deploy/} runs it, against its own kube-apiserver (the tests register a fail-closed
 * token webhook, which must not reach the shared server): the built jar started with the webhook
 * Deployment's args, as its ServiceAccount with {@code 10-rbac.yaml}'s RBAC, and
 * {@code webhooks/webhook-configurations.yaml} registered with only the Service replaced by a loopback URL. The
 * server runs the Node authorizer, and {@code system:node:node-a} (group {@code system:nodes}) stands in
 * for a kubelet.
 *
 * <p>With the webhook up: its RBAC is enough to admit pods and to check an agent's token request, and an
 * agent's request for the controllers' or the webhook's own ServiceAccount reaches the webhook (finding 1:
 * no namespace is skipped). With it stopped: the decision for API servers that ignore matchConditions (the
 * tests run v1.26.1) is what docs/versions.md states. Before 1.28 the stored configuration has no matchConditions
 * and a kubelet's token request fails while no replica is ready; from 1.28 only the agent's requests are
 * sent, and a kubelet's succeeds. An agent's request fails on every version (fail-closed).
 */
@RequiresKubeApiServer
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class DeployedWebhookIT {

    static final Path DEPLOY = DeployManifestsIT.DEPLOY;
    static final Path JAR = Path.of("target", "satoken-controlplane.jar");
    static final String NODE = "node-a";
    static final Duration WAIT = Duration.ofSeconds(60);
    static final String AUDIENCE = "vault";

    static KubeApiServer server;
    static Path work;
    static Process webhook;
    static Path webhookLog;
    static CoreV1Api admin;
    static int serverMinor;
    static String nodeToken = "node-" + UUID.randomUUID();
    static String agentToken;
    static String[] agent;
    static V1Pod agentPod;
    static V1Pod webhookPod;
    static String app;

    @BeforeAll
    static void start() throws Exception {
        assertThat(JAR).as("built by mvn package before the *IT phase").isRegularFile();
        work = Files.createTempDirectory("satoken-deployed-webhook-");
        Path tokens = work.resolve("tokens.csv");
        // the Deployment requires the API server's client certificate
        ApiServerClientCertificate clientCertificate = ApiServerClientCertificate.write(work.resolve("client-auth"));
        server = clientCertificate.presentedBy(KubeApiServer.builder()
                .flag("--authorization-mode", "Node,RBAC")
                .flag("--token-auth-file", tokens.toString()))
                .build();
        // token,user,uid,"groups": the harness's admin, and a kubelet's identity for the Node authorizer
        Files.writeString(tokens, server.adminToken() + ",admin,admin-uid,\"system:masters\"\n"
                + nodeToken + ",system:node:" + NODE + ",node-a-uid,\"system:nodes\"\n");
        server.start();
        admin = new CoreV1Api(server.adminClient());
        serverMinor = Integer.parseInt(new VersionApi(server.adminClient()).getCode().execute().getMinor()
                .replaceAll("\\D", ""));

        Manifests.apply(server, DEPLOY.resolve("00-namespace.yaml"));
        Manifests.apply(server, DEPLOY.resolve("10-rbac.yaml"));
        agent = DeployManifestsIT.agentServiceAccount().split("/");
        admin.createNamespace(new V1Namespace().metadata(new V1ObjectMeta().name(agent[0]))).execute();
        Manifests.apply(server, DeployManifestsIT.AGENT_DEPLOY.resolve("identity/serviceaccount.yaml"));
        Manifests.apply(server, DeployManifestsIT.AGENT_DEPLOY.resolve("10-rbac.yaml"));
        V1Deployment deployment = DeployManifestsIT.webhookDeployment();
        String webhookNs = deployment.getMetadata().getNamespace();
        String webhookSa = deployment.getSpec().getTemplate().getSpec().getServiceAccountName();

        // pods on node-a, made before any webhook is registered: the DaemonSet's agent pod (the agent's token
        // is bound to it, as kubelet binds a projected token) and a webhook pod (whose token kubelet asks for)
        agentPod = admin.createNamespacedPod(agent[0], pod("satoken-agent-" + NODE, agent[1])).execute();
        webhookPod = admin.createNamespacedPod(webhookNs, fromTemplate(deployment, "satoken-webhook-" + NODE)
                .spec(deployment.getSpec().getTemplate().getSpec().nodeName(NODE))).execute();
        agentToken = admin.createNamespacedServiceAccountToken(agent[1], agent[0], new AuthenticationV1TokenRequest()
                .spec(new V1TokenRequestSpec().expirationSeconds(3600L).boundObjectRef(bound(agentPod))))
                .execute().getStatus().getToken();
        app = server.createNamespace("app");
        server.createServiceAccount(app, "default");

        TestCertificates.Pair tls = TestCertificates.write(Files.createDirectories(work.resolve("tls")),
                "satoken-webhook");
        int webhookPort = freePort();
        int metricsPort = freePort();
        webhook = launch(deployment, server.serviceAccountToken(webhookNs, webhookSa), Map.of(
                "/etc/satoken/webhook-tls/tls.crt", tls.cert(), "/etc/satoken/webhook-tls/tls.key", tls.key(),
                ApiServerClientCertificate.MOUNTED_CA, clientCertificate.ca().cert()),
                Map.of("--webhook-address", webhookPort, "--metrics-address", metricsPort));
        HttpClient http = HttpClient.newHttpClient();
        await().atMost(WAIT).ignoreExceptions().until(() -> http.send(HttpRequest.newBuilder(
                URI.create("http://127.0.0.1:" + metricsPort + "/readyz")).build(),
                HttpResponse.BodyHandlers.discarding()).statusCode() == 200);
        register("https://127.0.0.1:" + webhookPort, tls.pem().getBytes(StandardCharsets.US_ASCII));
        // the API server picks webhook configurations up asynchronously: wait until a pod is mutated
        await().atMost(WAIT).pollInterval(Duration.ofMillis(200)).until(() -> admin.createNamespacedPod(app,
                pod("probe", null)).dryRun("All").execute().getSpec().getServiceAccountName() != null);
    }

    @AfterAll
    static void stop() throws IOException {
        stopWebhook();
        if (server != null) {
            server.close();
        }
        if (webhookLog != null && Files.exists(webhookLog)) {
            System.err.println("--- webhook log (tail) ---");
            List<String> lines = Files.readAllLines(webhookLog);
            lines.subList(Math.max(0, lines.size() - 30), lines.size()).forEach(System.err::println);
        }
    }

    @Test
    @Order(1)
    void webhook_admitsPods_withOnlyItsOwnRbac_inTheControllersNamespaceToo() throws Exception {
        V1Pod created = admin.createNamespacedPod(app, pod("plain", null)).execute();
        // the controllers' namespace is not skipped: a controller pod naming a missing ServiceAccount is refused
        V1Deployment deployment = DeployManifestsIT.controllersDeployment();
        V1Pod controllers = fromTemplate(deployment, "controllers");
        controllers.getSpec().serviceAccountName("missing");

        assertThat(created.getSpec().getServiceAccountName()).isEqualTo("default");
        assertThat(created.getSpec().getVolumes()).extracting(V1Volume::getName)
                .anyMatch(n -> n.startsWith("kube-api-access-"));
        assertThatThrownBy(() -> admin.createNamespacedPod(deployment.getMetadata().getNamespace(), controllers)
                .dryRun("All").execute())
                .isInstanceOfSatisfying(ApiException.class, e -> {
                    assertThat(e.getCode()).isEqualTo(403);
                    assertThat(e.getResponseBody())
                            .contains("admission webhook \\\"pods.serviceaccount.satoken.io\\\" denied the request");
                });
    }

    @Test
    @Order(2)
    void agent_getsATokenForAPodOnItsNode_theWebhookReadingBothPods() throws Exception {
        // a pod that asks the agent for a token (the webhook turns the annotation into a tokens.satoken.io volume)
        V1Pod target = pod("target", "default");
        target.getMetadata().annotations(Map.of("satoken.io/projections",
                "- path: vault/token\n  audience: " + AUDIENCE + "\n  expirationSeconds: 3600\n"));
        target = admin.createNamespacedPod(app, target).execute();

        String token = agentRequest(app, "default", bound(target));

        assertThat(token).isNotBlank();
    }

    /** Finding 1: the control plane's namespaces were skipped, so any agent could mint their tokens. */
    @Test
    @Order(3)
    void agent_cannotMintTheControllersOrTheWebhooksToken_noNamespaceIsSkipped() {
        for (String[] account : List.of(new String[] {DeployManifestsIT.NS, "satoken-controlplane"},
                new String[] {DeployManifestsIT.WEBHOOK_NS, "satoken-webhook"})) {
            assertThatThrownBy(() -> tokenRequest(agentToken, account[0], account[1], null))
                    .as("%s/%s", account[0], account[1])
                    .isInstanceOfSatisfying(ApiException.class, e -> {
                        assertThat(e.getCode()).isEqualTo(403);
                        assertThat(e.getResponseBody())
                                .contains("admission webhook \\\"serviceaccount-token.satoken.io\\\" denied the request");
                    });
        }
    }

    /** While the webhook is up, a kubelet's token request succeeds on every version. */
    @Test
    @Order(4)
    void kubelet_getsItsPodsToken_whileTheWebhookIsUp() {
        // the Node authorizer learns of node-a's pods from a watch: retry until it has
        String token = await().atMost(WAIT).ignoreExceptions().until(
                () -> tokenRequest(nodeToken, webhookPod.getMetadata().getNamespace(), webhookPod.getSpec()
                        .getServiceAccountName(), bound(webhookPod)), t -> t != null && !t.isBlank());

        assertThat(token).isNotBlank();
    }

    @Test
    @Order(5)
    void webhookDown_storedTokenWebhook_hasMatchConditionsFrom128Only() throws Exception {
        stopWebhook();
        V1ValidatingWebhookConfiguration file = (V1ValidatingWebhookConfiguration) Yaml.loadAll(
                DEPLOY.resolve("webhooks/webhook-configurations.yaml").toFile()).get(1);

        List<V1MatchCondition> stored = new AdmissionregistrationV1Api(server.adminClient())
                .readValidatingWebhookConfiguration(file.getMetadata().getName()).execute().getWebhooks().get(0)
                .getMatchConditions();

        if (serverMinor < 28) {
            assertThat(stored).as("v1.%d drops matchConditions", serverMinor).isNullOrEmpty();
        } else {
            assertThat(stored).isEqualTo(file.getWebhooks().get(0).getMatchConditions());
        }
    }

    /**
     * The documented limit: before 1.28 a kubelet's token request reaches the fail-closed webhook, so while
     * no replica is ready it fails (here for a new webhook pod's own token); from 1.28 it is never sent.
     */
    @Test
    @Order(6)
    void webhookDown_kubeletsTokenRequest_failsBefore128_andSucceedsFrom128() throws Exception {
        stopWebhook();
        String ns = webhookPod.getMetadata().getNamespace();
        String sa = webhookPod.getSpec().getServiceAccountName();

        if (serverMinor < 28) {
            assertThatThrownBy(() -> tokenRequest(nodeToken, ns, sa, bound(webhookPod)))
                    .isInstanceOfSatisfying(ApiException.class, e -> assertThat(e.getResponseBody())
                            .contains("failed calling webhook").contains("serviceaccount-token.satoken.io"));
        } else {
            assertThat(tokenRequest(nodeToken, ns, sa, bound(webhookPod))).isNotBlank();
        }
    }

    /** Fail-closed: an agent's request the webhook could not check is refused, on every version. */
    @Test
    @Order(7)
    void webhookDown_agentsTokenRequest_fails() throws Exception {
        stopWebhook();
        V1Pod target = admin.readNamespacedPod("target", app).execute();

        assertThatThrownBy(() -> agentRequest(app, "default", bound(target)))
                .isInstanceOfSatisfying(ApiException.class, e -> assertThat(e.getResponseBody())
                        .contains("failed calling webhook").contains("serviceaccount-token.satoken.io"));
    }

    // --- helpers ---------------------------------------------------------------------------------

    /** The agent's TokenRequest for a pod's volume: its audience and lifetime. */
    static String agentRequest(String namespace, String name, V1BoundObjectReference bound) throws ApiException {
        return new CoreV1Api(server.clientFor(agentToken)).createNamespacedServiceAccountToken(name, namespace,
                new AuthenticationV1TokenRequest().spec(new V1TokenRequestSpec().audiences(List.of(AUDIENCE))
                        .expirationSeconds(3600L).boundObjectRef(bound))).execute().getStatus().getToken();
    }

    /** A TokenRequest for {@code namespace/name} as the bearer of {@code token}; returns the new token. */
    static String tokenRequest(String token, String namespace, String name, V1BoundObjectReference bound)
            throws ApiException {
        ApiClient client = server.clientFor(token);
        return new CoreV1Api(client).createNamespacedServiceAccountToken(name, namespace,
                new AuthenticationV1TokenRequest().spec(new V1TokenRequestSpec().expirationSeconds(3600L)
                        .boundObjectRef(bound))).execute().getStatus().getToken();
    }

    static V1BoundObjectReference bound(V1Pod pod) {
        return new V1BoundObjectReference().kind("Pod").apiVersion("v1").name(pod.getMetadata().getName())
                .uid(pod.getMetadata().getUid());
    }

    /** A pod of the Deployment's template, as its ReplicaSet would create it. */
    static V1Pod fromTemplate(V1Deployment deployment, String name) {
        V1PodSpec spec = deployment.getSpec().getTemplate().getSpec().overhead(null);
        return new V1Pod().metadata(new V1ObjectMeta().name(name)
                .labels(deployment.getSpec().getTemplate().getMetadata().getLabels())).spec(spec);
    }

    /** A pod on node-a, as {@code serviceAccount} (null: none named). */
    static V1Pod pod(String name, String serviceAccount) {
        return new V1Pod().metadata(new V1ObjectMeta().name(name))
                .spec(new V1PodSpec().nodeName(NODE).serviceAccountName(serviceAccount).overhead(null)
                        .containers(List.of(new V1Container().name("main").image("busybox:1.36"))));
    }

    /**
     * Starts the jar with the Deployment's container args, changed only as a process outside a pod needs:
     * mounted files become local ones, {@code 0.0.0.0} ports loopback ones, and a kubeconfig holding a token
     * of the Deployment's ServiceAccount is added.
     */
    static Process launch(V1Deployment deployment, String token, Map<String, Path> files, Map<String, Integer> ports)
            throws IOException {
        Path kubeconfig = work.resolve("webhook.kubeconfig");
        server.writeKubeconfig(kubeconfig, token);
        List<String> command = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-jar", JAR.toString()));
        Map<String, String> addresses = new java.util.HashMap<>();
        ports.forEach((flag, port) -> addresses.put(flag, "127.0.0.1:" + port));
        command.addAll(DeployedManifests.localArgs(deployment, files, addresses));
        command.add("--kubeconfig=" + kubeconfig);
        webhookLog = work.resolve("webhook.log");
        return new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(webhookLog.toFile()).start();
    }

    static synchronized void stopWebhook() {
        if (webhook != null && webhook.isAlive()) {
            webhook.destroy();
            try {
                if (!webhook.waitFor(10, TimeUnit.SECONDS)) {
                    webhook.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }

    /** The two configurations as deployed, with a loopback URL for the Service and our CA as caBundle. */
    static void register(String base, byte[] caBundle) throws IOException, ApiException {
        DeployedManifests.registerWebhooks(server.adminClient(), DEPLOY, base, caBundle);
    }

    private static int freePort() throws IOException {
        try (ServerSocket s = new ServerSocket(0)) {
            return s.getLocalPort();
        }
    }
}
