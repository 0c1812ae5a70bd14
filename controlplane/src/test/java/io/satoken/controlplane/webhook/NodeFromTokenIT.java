package io.satoken.controlplane.webhook;

import io.satoken.controlplane.runtime.AdmissionWebhook;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.kubernetes.client.openapi.ApiClient;
import io.kubernetes.client.openapi.ApiException;
import io.kubernetes.client.openapi.apis.CoreV1Api;
import io.kubernetes.client.openapi.apis.VersionApi;
import io.kubernetes.client.openapi.models.V1Namespace;
import io.kubernetes.client.openapi.models.V1Node;
import io.kubernetes.client.openapi.models.V1ObjectMeta;
import io.kubernetes.client.openapi.models.V1Pod;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Timer;
import io.satoken.common.testing.KubeApiServer;
import io.satoken.common.testing.RequiresKubeApiServer;
import io.satoken.controlplane.runtime.ControlplaneRuntime;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * NT-1 on a real kube-apiserver, on each version the tier runs: from Kubernetes 1.30 the agent's own token
 * names its pod's node ({@code authentication.kubernetes.io/node-name}, the ServiceAccountTokenPodNodeInfo
 * feature, on by default), and the token webhook confines by it without reading the agent pod; before 1.30
 * it reads the agent pod. On both, a pod on another node gets nothing (NT-4). The webhook's own request
 * counter ({@code satoken_api_requests_total{verb="GET"}}) is the count of pods it read: this process runs no
 * controller and no informer, so every GET is a pod read.
 *
 * <p>The server has Node objects node-a and node-b: the API server embeds a node's name in a pod's token
 * only when it finds the Node. {@code -Dsatoken.nodeFromToken.agents=N} and {@code .requests=N} raise the
 * counts of the measurement ({@link #measure()}), which prints what BENCHMARKS.md records.
 */
@RequiresKubeApiServer
class NodeFromTokenIT {

    static final String AGENT_NAMESPACE = WebhookFixture.AGENT_NAMESPACE;
    static final String AGENT = WebhookFixture.AGENT;
    static final int AGENTS = Integer.getInteger("satoken.nodeFromToken.agents", 20);
    static final int REQUESTS = Integer.getInteger("satoken.nodeFromToken.requests", 50);

    static KubeApiServer server;
    static WebhookFixture webhook;
    static ControlplaneRuntime runtime;
    static CoreV1Api admin;
    static String namespace;
    static int serverMinor;
    static V1Pod near;
    static V1Pod far;

    @BeforeAll
    static void start() throws Exception {
        server = KubeApiServer.create().start();
        ApiClient client = server.adminClient();
        admin = new CoreV1Api(client);
        serverMinor = Integer.parseInt(new VersionApi(client).getCode().execute().getMinor().replaceAll("\\D", ""));
        webhook = WebhookFixture.start(server, Set.of(), Set.of("serviceaccount-token"));
        runtime = webhook.runtime();

        for (String node : List.of("node-a", "node-b")) {
            admin.createNode(new V1Node().metadata(new V1ObjectMeta().name(node))).execute();
        }
        admin.createNamespace(new V1Namespace().metadata(new V1ObjectMeta().name(AGENT_NAMESPACE))).execute();
        server.createServiceAccount(AGENT_NAMESPACE, AGENT);
        webhook.allowAgentTokenRequests();
        namespace = server.createNamespace("app");
        server.createServiceAccount(namespace, "web");
        near = admin.createNamespacedPod(namespace, AdmissionWebhookIT.onNode(AdmissionWebhookIT.asking(
                AdmissionWebhookIT.pod("near", null), "vault"), "node-a", "web")).execute();
        far = admin.createNamespacedPod(namespace, AdmissionWebhookIT.onNode(AdmissionWebhookIT.asking(
                AdmissionWebhookIT.pod("far", null), "vault"), "node-b", "web")).execute();

        webhook.registerTokenWebhook();
        // the API server picks webhook configurations up asynchronously: wait until the agent is refused
        CoreV1Api probe = agentOnNodeA("agent-probe");
        Awaitility.await().atMost(Duration.ofSeconds(60)).pollInterval(Duration.ofMillis(200)).until(() -> {
            try {
                request(probe, far);
                return false;
            } catch (ApiException e) {
                return e.getCode() == 403 && e.getResponseBody().contains("NT-4");
            }
        });
    }

    @AfterAll
    static void stop() {
        if (webhook != null) {
            webhook.close();
        }
        if (server != null) {
            server.close();
        }
    }

    @Test
    void agent_getsATokenForItsNodesPod_andNoneForAnotherNodes_nodeFromTheTokenFrom130() throws Exception {
        CoreV1Api agent = agentOnNodeA("agent-a");

        String token = request(agent, near);

        assertThat(token).isNotBlank();
        String learnt = serverMinor >= 30 ? "(named by its token)" : "(read from the pod)";
        assertThatThrownBy(() -> request(agent, far)).isInstanceOfSatisfying(ApiException.class, e -> {
            assertThat(e.getCode()).isEqualTo(403);
            assertThat(e.getResponseBody()).contains("NT-4: pod " + namespace + "/far is on node node-b, but the "
                    + "agent pod " + AGENT_NAMESPACE + "/agent-a is on node node-a " + learnt);
        });
    }

    @Test
    void agentPodRead_onlyWhereTheTokenNamesNoNode() throws Exception {
        CoreV1Api agent = agentOnNodeA("agent-reads");
        double before = podReads();

        request(agent, near); // a new agent pod: its first review
        double first = podReads() - before;
        request(agent, near); // remembered by uid on older servers
        double second = podReads() - before - first;

        assertThat(first).as("pods read by the first review on v1.%d", serverMinor).isEqualTo(serverMinor >= 30 ? 1 : 2);
        assertThat(second).as("pods read by the second review").isEqualTo(1);
    }

    /**
     * What BENCHMARKS.md records: for {@link #AGENTS} new agent pods, one TokenRequest each (the first review
     * of an agent pod); then {@link #REQUESTS} more from one of them. Pods read per review, the TokenRequest's
     * latency at the client (p50, p99) and the webhook's own mean review time.
     */
    @Test
    void measure() throws Exception {
        List<CoreV1Api> agents = new ArrayList<>();
        for (int i = 0; i < AGENTS; i++) {
            agents.add(agentOnNodeA("agent-m" + i));
        }
        request(agents.get(0), near); // warm the webhook's connections; not a first review below
        agents.set(0, agentOnNodeA("agent-m-first"));
        for (CoreV1Api agent : agents) { // and each client's: a TLS handshake is not the review's cost
            new VersionApi(agent.getApiClient()).getCode().execute();
        }

        Phase firstReviews = phase(() -> {
            List<Long> nanos = new ArrayList<>();
            for (CoreV1Api agent : agents) {
                nanos.add(timed(agent));
            }
            return nanos;
        }, AGENTS);
        Phase steady = phase(() -> {
            List<Long> nanos = new ArrayList<>();
            for (int i = 0; i < REQUESTS; i++) {
                nanos.add(timed(agents.get(0)));
            }
            return nanos;
        }, REQUESTS);

        System.out.printf("NodeFromTokenIT v1.%d (%s): first review of an agent pod: %s%n", serverMinor,
                serverMinor >= 30 ? "node from the token" : "agent pod read", firstReviews);
        System.out.printf("NodeFromTokenIT v1.%d: later reviews: %s%n", serverMinor, steady);
        assertThat(firstReviews.readsPerReview()).isEqualTo(serverMinor >= 30 ? 1.0 : 2.0);
        assertThat(steady.readsPerReview()).isEqualTo(1.0);
    }

    // --- helpers ---------------------------------------------------------------------------------

    record Phase(int n, double readsPerReview, double p50Ms, double p99Ms, double webhookMeanMs) {
        @Override
        public String toString() {
            return String.format("%d TokenRequests, %.2f pod reads per review, latency p50 %.2f ms, p99 %.2f ms, "
                    + "webhook mean review %.2f ms", n, readsPerReview, p50Ms, p99Ms, webhookMeanMs);
        }
    }

    interface Run {
        List<Long> go() throws Exception;
    }

    static Phase phase(Run run, int n) throws Exception {
        double reads = podReads();
        Timer timer = reviewTimer();
        long count = timer.count();
        double total = timer.totalTime(TimeUnit.MILLISECONDS);
        List<Long> nanos = run.go();
        Collections.sort(nanos);
        return new Phase(n, (podReads() - reads) / n, nanos.get((int) Math.ceil(0.5 * n) - 1) / 1e6,
                nanos.get((int) Math.ceil(0.99 * n) - 1) / 1e6,
                (timer.totalTime(TimeUnit.MILLISECONDS) - total) / (timer.count() - count));
    }

    static long timed(CoreV1Api agent) throws ApiException {
        long start = System.nanoTime();
        assertThat(request(agent, near)).isNotBlank();
        return System.nanoTime() - start;
    }

    /** Pods the webhook has read: its GETs, as this process makes no other. */
    static double podReads() {
        return runtime.registry().find("satoken_api_requests_total").tag("verb", "GET").counters().stream()
                .mapToDouble(Counter::count).sum();
    }

    static Timer reviewTimer() {
        return runtime.registry().get("satoken_webhook_request_duration_seconds")
                .tag("path", AdmissionWebhook.VALIDATE_TOKEN_REQUESTS).timer();
    }

    /** A new agent pod on node-a and the agent acting with a token bound to it, as the kubelet projects it. */
    static CoreV1Api agentOnNodeA(String name) throws ApiException {
        V1Pod pod = admin.createNamespacedPod(AGENT_NAMESPACE, AdmissionWebhookIT.onNode(
                AdmissionWebhookIT.pod(name, null), "node-a", AGENT)).execute();
        String token = admin.createNamespacedServiceAccountToken(AGENT, AGENT_NAMESPACE,
                AdmissionWebhookIT.boundTo(pod, KubeApiServer.ISSUER)).execute().getStatus().getToken();
        return new CoreV1Api(server.clientFor(token));
    }

    /** The agent's TokenRequest for {@code pod}'s volume (audience vault, 3600 s). */
    static String request(CoreV1Api agent, V1Pod pod) throws ApiException {
        return agent.createNamespacedServiceAccountToken("web", namespace, AdmissionWebhookIT.boundTo(pod, "vault"))
                .execute().getStatus().getToken();
    }
}
