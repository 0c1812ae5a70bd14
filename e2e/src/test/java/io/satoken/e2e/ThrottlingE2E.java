package io.satoken.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import io.grpc.Status;
import io.kubernetes.client.openapi.models.V1Pod;
import io.satoken.agent.testing.KubeletCsiClient;
import io.satoken.common.testing.KubeApiServer;
import io.satoken.common.testing.PrometheusText;
import io.satoken.common.testing.RequiresKubeApiServer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * A burst of 1,000 pods on one node against an API server that sheds load: kube-apiserver runs with
 * API Priority and Fairness off ({@code --enable-priority-and-fairness=false}), so the classic in-flight
 * limits apply literally ({@code --max-requests-inflight=4}, {@code --max-mutating-requests-inflight=2})
 * and excess requests, the agent's TokenRequests and pod reads included, are refused with 429. The agent
 * runs with {@code --qps 20 --burst 40}. The test is node-a's kubelet ({@link KubeletCsiClient}): it
 * publishes each pod's CSI volume as soon as the pod exists, all of them at once, and publishes again after
 * a failure or a timeout with the kubelet's backoff. Proven: over every window between two samples of the
 * agent's request counter, it made at most {@code burst + qps * window} TokenRequests (plus the requests
 * already under way when the window opened, at most one per refresh thread); every pod's volume is
 * published with its token file; and there is no request loop: TokenRequests that did not fail are at most
 * one per pod, and the counter stays flat once every file exists.
 */
@RequiresKubeApiServer
@RequiresMounts
class ThrottlingE2E {

    private static final String TEST = "throttling";
    private static final int PODS = 1000;
    private static final double QPS = 20; // a whole number: passed as --qps
    private static final int BURST = 40;
    /** The agent's refresh threads: requests that took their slot before a window opened may be counted in it. */
    private static final int IN_FLIGHT_SLACK = 4;
    private static final String NODE = "node-a";
    private static final Duration FLAT = Duration.ofSeconds(20);

    @RegisterExtension
    static final ApiServerFixture API = new ApiServerFixture(TEST, b -> b
            .flag("--enable-priority-and-fairness", "false")
            .flag("--max-requests-inflight", "4")
            .flag("--max-mutating-requests-inflight", "2"));

    @Test
    void podBurst_underApiServerThrottling_staysWithinTheClientRateLimit_andEveryVolumeGetsItsTokenWithoutLoops(
            @TempDir Path tmp) throws Exception {
        KubeApiServer server = API.server();
        CsiAgentSetup setup = CsiAgentSetup.write(server, tmp, NODE);
        try (KubeletCsiClient kubelet = KubeletCsiClient.open(setup.kubeletDir())) {
            SatokenProcess agent = null;
            try {
                String namespace = server.createNamespace("throttle");
                server.createServiceAccount(namespace, "app");
                agent = setup.start("throttling-agent", kubelet, "--qps", Integer.toString((int) QPS), "--burst",
                        Integer.toString(BURST));
                burst(server, agent, kubelet, namespace);
            } finally {
                if (agent != null) {
                    agent.close();
                }
            }
        }
    }

    private static void burst(KubeApiServer server, SatokenProcess agent, KubeletCsiClient kubelet, String namespace)
            throws Exception {
        double server429Before = PrometheusText.value(server.metricsText(), "apiserver_request_total",
                "code=\"429\"");
        NodePods pods = new NodePods(server.adminClient(), namespace, NODE, "app");
        List<CompletableFuture<Path>> published = Collections.synchronizedList(new ArrayList<>());
        Instant burstStart = Instant.now();
        Instant giveUp = burstStart.plus(Duration.ofMinutes(6));
        try (RequestRateSampler sampler = new RequestRateSampler(agent, 250).start()) {
            // the kubelet publishes a pod's volume as soon as the pod is bound to its node
            CompletableFuture<List<V1Pod>> created = CompletableFuture.supplyAsync(() -> {
                try {
                    return pods.createMany("burst", PODS, Map.of("audience", "throttle-e2e"), 16,
                            pod -> published.add(kubelet.publishUntilDone(pod, NodePods.volume(pod), giveUp)));
                } catch (Exception e) {
                    throw new IllegalStateException(e);
                }
            });
            List<V1Pod> all = created.get(5, TimeUnit.MINUTES);
            Duration createTime = Duration.between(burstStart, Instant.now());
            int done;
            while ((done = succeeded(published)) < PODS && Instant.now().isBefore(giveUp)
                    && !published.stream().allMatch(CompletableFuture::isDone)) {
                assertThat(agent.isAlive()).as("agent alive during the burst").isTrue();
                SatokenProcess.pause(Duration.ofMillis(500));
            }
            done = succeeded(published);
            Instant allPublished = Instant.now();
            int withFile = 0;
            for (V1Pod pod : all) {
                withFile += Files.isRegularFile(kubelet.targetPath(pod, NodePods.VOLUME).resolve("token")) ? 1 : 0;
            }
            double atAllFiles = agent.metric("satoken_token_requests_total");
            SatokenProcess.pause(FLAT);
            String metrics = agent.metrics();
            double afterFlat = PrometheusText.value(metrics, "satoken_token_requests_total");
            double success = PrometheusText.value(metrics, "satoken_token_requests_total", "result=\"success\"");
            double retryable = PrometheusText.value(metrics, "satoken_token_requests_total", "result=\"retryable\"");
            double refused = PrometheusText.value(metrics, "satoken_token_requests_total", "result=\"refused\"");
            String serverMetrics = server.metricsText();
            double serverTokens = PrometheusText.value(serverMetrics, "apiserver_request_total",
                    "resource=\"serviceaccounts\"", "subresource=\"token\"", "verb=\"POST\"");
            double serverToken429 = PrometheusText.value(serverMetrics, "apiserver_request_total",
                    "resource=\"serviceaccounts\"", "subresource=\"token\"", "verb=\"POST\"", "code=\"429\"");
            double server429 = PrometheusText.value(serverMetrics, "apiserver_request_total", "code=\"429\"")
                    - server429Before;
            Map<Status.Code, Integer> retried = kubelet.retriedFailures();
            int retries = retried.values().stream().mapToInt(Integer::intValue).sum();
            RequestRateSampler.Excess worst = sampler.worstWindow(QPS, BURST, IN_FLIGHT_SLACK);
            Figures.record(TEST, String.format("%d pods created in %.1f s (%d creates retried after 429), each"
                            + " CSI volume published by the test-as-kubelet as its pod was created;"
                            + " all %d volumes published with their token file %.1f s after the first create"
                            + " (%d published, %d with a file, at the end); %d publishes failed and were retried"
                            + " with the kubelet's backoff (%s);"
                            + " agent TokenRequests: %.0f (success %.0f, retryable %.0f, refused %.0f);"
                            + " kube-apiserver counted %.0f TokenRequests, %.0f of them 429, and %.0f 429s in all"
                            + " during the burst; peak rate %.1f/s over >= 1 s windows, %.1f/s over >= 5 s;"
                            + " worst window %.2f s with %.0f requests against %.1f allowed (burst %d + qps %.0f x"
                            + " window + %d in flight); %d samples every 250 ms, %d failed scrapes; counter moved"
                            + " %.0f in the %d s after the last publish",
                    PODS, createTime.toMillis() / 1000.0, pods.throttledCreates(), PODS,
                    Duration.between(burstStart, allPublished).toMillis() / 1000.0, done, withFile, retries, retried,
                    afterFlat, success, retryable, refused, serverTokens, serverToken429, server429,
                    sampler.peakRate(1), sampler.peakRate(5), worst.seconds(), worst.counted(), worst.allowed(),
                    BURST, QPS, IN_FLIGHT_SLACK, sampler.samples().size(), sampler.failedScrapes(),
                    afterFlat - atAllFiles, FLAT.toSeconds()));

            assertThat(done).as("volumes published").isEqualTo(PODS);
            assertThat(withFile).as("volumes with their token file").isEqualTo(PODS);
            assertThat(sampler.samples().size()).as("samples of the request counter").isGreaterThan(20);
            assertThat(worst.counted()).as("TokenRequests in the worst window (%.2f s)", worst.seconds())
                    .isLessThanOrEqualTo(worst.allowed());
            assertThat(afterFlat).as("TokenRequests: at most one per pod plus the retried failures")
                    .isLessThanOrEqualTo(PODS + retryable);
            assertThat(success).as("successful TokenRequests: one per pod").isEqualTo(PODS);
            assertThat(afterFlat - atAllFiles).as("TokenRequests in the %d s after every volume was published",
                    FLAT.toSeconds()).isZero();
            assertThat(server429).as("the API server shed load with 429 during the burst").isPositive();
            assertThat(agent.isAlive()).isTrue();
        }
    }

    private static int succeeded(List<CompletableFuture<Path>> published) {
        synchronized (published) {
            return (int) published.stream().filter(f -> f.isDone() && !f.isCompletedExceptionally()).count();
        }
    }
}
