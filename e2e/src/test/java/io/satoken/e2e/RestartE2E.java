package io.satoken.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import io.kubernetes.client.openapi.models.V1Pod;
import io.satoken.agent.testing.KubeletCsiClient;
import io.satoken.common.testing.KubeApiServer;
import io.satoken.common.testing.MountTable;
import io.satoken.common.testing.PrometheusText;
import io.satoken.common.testing.RequiresKubeApiServer;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * Restart without a token storm (README, CSI volumes): the test, as node-a's kubelet, has the agent publish
 * a CSI volume for each of 500 pods, so each holds a pod-bound token in its own tmpfs; the agent is stopped
 * with SIGTERM and a new agent process starts on the same {@code kubeletDir}. The kubelet does not publish
 * those volumes again: the new agent resumes them from its volume records, whose tmpfs mounts are still
 * there. None of the tokens is due (1 h tokens, seconds old), so in the minute after the restart the new
 * agent makes no TokenRequest at all, by its own count and by kube-apiserver's, and every file still holds
 * the token it held before.
 */
@RequiresKubeApiServer
@RequiresMounts
class RestartE2E {

    private static final String TEST = "restart";
    private static final int PODS = 500;
    private static final String NODE = "node-a";
    private static final Map<String, String> ATTRIBUTES = Map.of("audience", "restart-e2e", "expirationSeconds", "3600");
    private static final Duration OBSERVED = Duration.ofSeconds(60);

    @RegisterExtension
    static final ApiServerFixture API = new ApiServerFixture(TEST);

    @Test
    void restartedAgent_resumesEveryPublishedVolume_adoptingItsToken_andMakesNoTokenRequestInTheMinuteAfter(
            @TempDir Path tmp) throws Exception {
        KubeApiServer server = API.server();
        CsiAgentSetup setup = CsiAgentSetup.write(server, tmp, NODE);
        Path kubeletDir = setup.kubeletDir();
        try (KubeletCsiClient kubelet = KubeletCsiClient.open(kubeletDir)) {
            SatokenProcess first = null;
            SatokenProcess second = null;
            try {
                String namespace = server.createNamespace("restart");
                server.createServiceAccount(namespace, "app");
                List<V1Pod> pods = new NodePods(server.adminClient(), namespace, NODE, "app")
                        .createMany("restart", PODS, ATTRIBUTES, 4, pod -> { });

                first = setup.start("restart-agent-1", kubelet);
                Instant firstStarted = Instant.now();
                Instant giveUp = firstStarted.plus(Duration.ofMinutes(3));
                List<CompletableFuture<Path>> published = new ArrayList<>();
                for (V1Pod pod : pods) {
                    published.add(kubelet.publishUntilDone(pod, NodePods.volume(pod), giveUp));
                }
                CompletableFuture.allOf(published.toArray(CompletableFuture[]::new)).get(4, TimeUnit.MINUTES);
                Duration toAllFiles = Duration.between(firstStarted, Instant.now());
                double firstRequests = first.metric("satoken_token_requests_total");
                Map<String, String> before = new HashMap<>();
                for (V1Pod pod : pods) {
                    before.put(uid(pod), IssuedTokens.read(tokenFile(kubelet, pod)));
                }
                assertThat(before.values().stream().distinct().count()).as("one token per pod, each bound to it")
                        .isEqualTo(PODS);
                int exitStatus = first.stop();
                assertThat(exitStatus).as("exit status after SIGTERM, within 20 s").isZero();
                long mountedAfterStop = agentMounts(kubeletDir);

                // The restart: a new process on the same kubeletDir, with its volume records and the mounted
                // tmpfs to go on. The kubelet registers the new plugin socket and publishes nothing again.
                double serverBefore = ApiServerMetrics.tokenRequests(server, null);
                Instant restarted = Instant.now();
                second = setup.start("restart-agent-2", kubelet);
                Duration toReady = Duration.between(restarted, Instant.now());
                SatokenProcess.pause(Duration.between(Instant.now(), restarted.plus(OBSERVED)));
                String metrics = second.metrics();
                double agentRequests = PrometheusText.value(metrics, "satoken_token_requests_total");
                double serverRequests = ApiServerMetrics.tokenRequests(server, null) - serverBefore;
                double ready = PrometheusText.value(metrics, "satoken_projections", "state=\"ready\"");
                // this process's part of its log (a log name is reused, and appended to, by a later run of the suite)
                String log = second.logText();
                long adoptedLines = log.substring(Math.max(0, log.lastIndexOf("serving /healthz"))).lines()
                        .filter(l -> l.contains("resumed volume") && l.contains("adopted 1 of 1 token(s)")).count();
                int unchanged = 0;
                for (V1Pod pod : pods) {
                    if (IssuedTokens.read(tokenFile(kubelet, pod)).equals(before.get(uid(pod)))) {
                        unchanged++;
                    }
                }
                Figures.record(TEST, String.format("%d pods, one CSI volume with a 3600 s pod-bound token each: the"
                                + " kubelet's %d publishes all answered %.1f s after the first agent was ready, with"
                                + " %.0f TokenRequests; %d tmpfs mounts left after SIGTERM; after a restart on the"
                                + " same kubeletDir, in the %d s after the restart: %.0f TokenRequests by the new"
                                + " agent's count, %.0f by kube-apiserver's (which had counted %.0f before the"
                                + " restart); %d of %d files unchanged; %d volumes resumed adopting their token;"
                                + " %.0f projections ready; new agent ready (registered) %.1f s after start; first"
                                + " agent's exit status after SIGTERM %d",
                        PODS, PODS, toAllFiles.toMillis() / 1000.0, firstRequests, mountedAfterStop,
                        OBSERVED.toSeconds(), agentRequests, serverRequests, serverBefore, unchanged, PODS,
                        adoptedLines, ready, toReady.toMillis() / 1000.0, exitStatus));

                assertThat(mountedAfterStop).as("the stopped agent's tmpfs mounts, left for the next one").isEqualTo(PODS);
                assertThat(agentRequests).as("TokenRequests by the restarted agent (its metric)").isZero();
                assertThat(serverBefore).as("kube-apiserver's count of the first agent's TokenRequests, so its metric"
                        + " counts them").isGreaterThanOrEqualTo(firstRequests);
                assertThat(serverRequests).as("TokenRequests kube-apiserver served after the restart").isZero();
                assertThat(unchanged).as("files still holding the token they held before the restart").isEqualTo(PODS);
                assertThat(adoptedLines).as("volumes resumed with their token adopted").isEqualTo(PODS);
                assertThat(ready).as("projections ready in the new agent").isEqualTo(PODS);
                assertThat(second.isAlive()).isTrue();
            } finally {
                if (second != null) {
                    second.close();
                }
                if (first != null) {
                    first.close();
                }
            }
        }
    }

    private static String uid(V1Pod pod) {
        return pod.getMetadata().getUid();
    }

    private static Path tokenFile(KubeletCsiClient kubelet, V1Pod pod) {
        return kubelet.targetPath(pod, NodePods.VOLUME).resolve("token");
    }

    /** The agent's tmpfs mounts under the kubelet directory. */
    private static long agentMounts(Path kubeletDir) throws IOException {
        return MountTable.under(kubeletDir).stream()
                .filter(m -> "tmpfs".equals(m.type()) && KubeletCsiClient.DRIVER.equals(m.source())).count();
    }
}
