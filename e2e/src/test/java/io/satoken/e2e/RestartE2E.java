package io.satoken.e2e;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.satoken.common.testing.KubeApiServer;
import io.satoken.common.testing.RequiresKubeApiServer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Restart without a token storm (README, pod mode): a pod-mode agent has written a pod-bound token for
 * each of 500 pods on its node; it is stopped with SIGTERM and a new agent process starts on the same
 * {@code rootDir}. None of the tokens is due (1 h tokens, seconds old), so in the minute after the
 * restart the new agent makes no TokenRequest at all, by its own count and by kube-apiserver's, and every
 * file still holds the token it held before.
 */
@RequiresKubeApiServer
class RestartE2E {

    private static final String TEST = "restart";
    private static final int PODS = 500;
    private static final String NODE = "node-a";
    private static final String PROJECTIONS = """
            - path: token
              audience: restart-e2e
              expirationSeconds: 3600
            """;
    private static final Duration OBSERVED = Duration.ofSeconds(60);

    @Test
    void restartedAgent_adoptsEveryTokenOnDisk_andMakesNoTokenRequestInTheMinuteAfter(@TempDir Path tmp)
            throws Exception {
        KubeApiServer server = KubeApiServer.builder().build().start();
        SatokenProcess first = null;
        SatokenProcess second = null;
        try {
            Path kubeconfig = AgentIdentity.kubeconfig(server, tmp.resolve("kubeconfig"));
            String namespace = server.createNamespace("restart");
            server.createServiceAccount(namespace, "app");
            Path root = tmp.resolve("root");
            Path config = Files.writeString(tmp.resolve("agent.yaml"), "mode: pods\nrootDir: " + root + "\n");
            List<String> uids = new NodePods(server.adminClient(), namespace, NODE, "app")
                    .createMany("restart", PODS, PROJECTIONS, 4);

            String firstAddress = "127.0.0.1:" + E2E.freePort();
            first = SatokenProcess.agent("restart-agent-1", args(config, kubeconfig, firstAddress), firstAddress, Map.of());
            first.awaitReady(Duration.ofSeconds(60));
            Instant firstStarted = Instant.now();
            await().atMost(Duration.ofMinutes(3)).pollInterval(Duration.ofMillis(500))
                    .until(() -> NodePods.withFile(root, uids, "token") == PODS);
            Duration toAllFiles = Duration.between(firstStarted, Instant.now());
            double firstRequests = first.metric("satoken_token_requests_total");
            Map<String, String> before = new HashMap<>();
            for (String uid : uids) {
                before.put(uid, IssuedTokens.read(tokenFile(root, uid)));
            }
            assertThat(before.values().stream().distinct().count()).as("one token per pod, each bound to it")
                    .isEqualTo(PODS);
            int exitStatus = first.stop();
            assertThat(exitStatus).as("exit status after SIGTERM, within 20 s").isZero();

            // The restart: a new process on the same rootDir, with nothing but the files to go on.
            double serverBefore = ApiServerMetrics.tokenRequests(server, null);
            String secondAddress = "127.0.0.1:" + E2E.freePort();
            Instant restarted = Instant.now();
            second = SatokenProcess.agent("restart-agent-2", args(config, kubeconfig, secondAddress), secondAddress,
                    Map.of());
            second.awaitReady(Duration.ofSeconds(60));
            Duration toReady = Duration.between(restarted, Instant.now());
            SatokenProcess.pause(Duration.between(Instant.now(), restarted.plus(OBSERVED)));
            String metrics = second.metrics();
            double agentRequests = PromText.value(metrics, "satoken_token_requests_total");
            double serverRequests = ApiServerMetrics.tokenRequests(server, null) - serverBefore;
            double ready = PromText.value(metrics, "satoken_projections", "state=\"ready\"");
            // this process's part of its log (a log name is reused, and appended to, by a later run of the suite)
            String log = second.logText();
            long adoptedLines = log.substring(Math.max(0, log.lastIndexOf("serving /healthz"))).lines()
                    .filter(l -> l.contains("adopted 1 token(s) already on disk")).count();
            int unchanged = 0;
            for (String uid : uids) {
                if (IssuedTokens.read(tokenFile(root, uid)).equals(before.get(uid))) {
                    unchanged++;
                }
            }
            Figures.record(TEST, String.format("%d pods, one 3600 s pod-bound token each: first agent wrote all %d"
                            + " files %.1f s after it was ready with %.0f TokenRequests; after SIGTERM and a restart on"
                            + " the same rootDir, in the %d s after the restart: %.0f TokenRequests by the new agent's"
                            + " count, %.0f by kube-apiserver's (which had counted %.0f before the restart); %d of %d files unchanged; %d pods adopted from disk;"
                            + " %.0f projections ready; new agent ready %.1f s after start; first agent's exit status after SIGTERM %d",
                    PODS, PODS, toAllFiles.toMillis() / 1000.0, firstRequests, OBSERVED.toSeconds(), agentRequests,
                    serverRequests, serverBefore, unchanged, PODS, adoptedLines, ready, toReady.toMillis() / 1000.0, exitStatus));

            assertThat(agentRequests).as("TokenRequests by the restarted agent (its metric)").isZero();
            assertThat(serverBefore).as("kube-apiserver's count of the first agent's TokenRequests, so its metric"
                    + " counts them").isGreaterThanOrEqualTo(firstRequests);
            assertThat(serverRequests).as("TokenRequests kube-apiserver served after the restart").isZero();
            assertThat(unchanged).as("files still holding the token they held before the restart").isEqualTo(PODS);
            assertThat(ready).as("projections ready in the new agent").isEqualTo(PODS);
            assertThat(second.isAlive()).isTrue();
        } finally {
            if (second != null) {
                second.close();
            }
            if (first != null) {
                first.close();
            }
            E2E.closeKeepingLogs(server, TEST);
        }
    }

    private static List<String> args(Path config, Path kubeconfig, String metricsAddress) {
        return List.of("run", "--config", config.toString(), "--kubeconfig", kubeconfig.toString(),
                "--node-name", NODE, "--metrics-address", metricsAddress);
    }

    private static Path tokenFile(Path root, String uid) {
        return root.resolve("pods").resolve(uid).resolve("token");
    }
}
