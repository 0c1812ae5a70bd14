package io.satoken.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import io.satoken.common.testing.KubeApiServer;
import io.satoken.common.testing.RequiresKubeApiServer;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Exit statuses an operator's supervisor acts on: 0 after SIGTERM is covered by every test that stops a
 * process; here, a process that fails to start after its SIGTERM handling is in place (its metrics port
 * is taken) must exit 1 with a line naming the address, never the 0 of a clean stop, or systemd would
 * not restart it ({@code Restart=on-failure}) and a Deployment would count it as done.
 */
@RequiresKubeApiServer
class ExitStatusE2E {

    @Test
    void agentWhoseMetricsPortIsTaken_exits1_namingTheAddress(KubeApiServer server, @TempDir Path tmp)
            throws Exception {
        Path kubeconfig = tmp.resolve("kubeconfig");
        server.writeKubeconfig(kubeconfig, server.adminToken());
        Path config = Files.writeString(tmp.resolve("agent.yaml"), "mode: csi\nkubeletDir: " + tmp.resolve("kubelet")
                + "\n");
        try (ServerSocket taken = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            String address = "127.0.0.1:" + taken.getLocalPort();
            try (SatokenProcess agent = SatokenProcess.agent("exit-status-agent", List.of("run", "--config",
                    config.toString(), "--kubeconfig", kubeconfig.toString(), "--node-name", "node-a",
                    "--metrics-address", address), null, Map.of())) {
                assertThat(agent.awaitExit(Duration.ofSeconds(60))).as("exit status; log:%n%s", agent.tail()).isEqualTo(1);
                assertThat(agent.logText()).contains(String.valueOf(taken.getLocalPort()))
                        // the start-up line: what runs and where, before the failed start
                        .containsPattern("satoken-agent \\S+ \\(commit \\S+\\) starting; API server "
                                + Pattern.quote(server.url()))
                        .doesNotContain(server.adminToken());
            }
        }
    }

    /** validate from the built launchers: 0 for good input, 2 with every error at once, the same flags as run. */
    @Test
    void validate_exits0ForAGoodConfig_and2WithEveryError(@TempDir Path tmp) throws Exception {
        Path good = Files.writeString(tmp.resolve("good.yaml"), "mode: csi\n");
        try (SatokenProcess agent = SatokenProcess.agent("validate-good", List.of("validate", "--config",
                good.toString(), "--node-name", "node-a"), null, Map.of())) {
            assertThat(agent.awaitExit(Duration.ofSeconds(60))).as("exit status; log:%n%s", agent.tail()).isZero();
            assertThat(agent.logText()).contains("OK: " + good + ": mode csi");
        }
        Path bad = Files.writeString(tmp.resolve("bad.yaml"), "mode: static\nprojections:\n"
                + "  - {namespace: ns, serviceAccount: sa, dir: relative, expirationSeconds: 60}\n");
        try (SatokenProcess agent = SatokenProcess.agent("validate-bad", List.of("validate", "--config",
                bad.toString(), "--qps", "0"), null, Map.of())) {
            assertThat(agent.awaitExit(Duration.ofSeconds(60))).as("exit status; log:%n%s", agent.tail()).isEqualTo(2);
            assertThat(agent.logText()).contains("--qps must be > 0", "projections[0].dir", "projections[0].expirationSeconds");
        }
        try (SatokenProcess controlplane = SatokenProcess.controlplane("validate-controlplane", List.of("validate",
                "--controllers=serviceaccounts", "--leader-elect=false", "--leader-elect-lease-duration=1s",
                "--tls-cert-file=" + tmp.resolve("absent.crt")), null, Map.of())) {
            assertThat(controlplane.awaitExit(Duration.ofSeconds(60))).as("exit status; log:%n%s",
                    controlplane.tail()).isEqualTo(2);
            assertThat(controlplane.logText()).contains("lease duration > renew deadline", "need --webhook-address",
                    "absent.crt: not found or not readable");
        }
    }

    @Test
    void controlPlaneWhoseMetricsPortIsTaken_exits1_namingTheAddress(KubeApiServer server, @TempDir Path tmp)
            throws Exception {
        Path kubeconfig = tmp.resolve("kubeconfig");
        server.writeKubeconfig(kubeconfig, server.adminToken());
        try (ServerSocket taken = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            String address = "127.0.0.1:" + taken.getLocalPort();
            try (SatokenProcess controlplane = SatokenProcess.controlplane("exit-status-controlplane", List.of("run",
                    "--kubeconfig=" + kubeconfig, "--controllers=serviceaccounts", "--leader-elect=false",
                    "--metrics-address=" + address), null, Map.of())) {
                assertThat(controlplane.awaitExit(Duration.ofSeconds(60))).as("exit status; log:%n%s",
                        controlplane.tail()).isEqualTo(1);
                assertThat(controlplane.logText()).contains(String.valueOf(taken.getLocalPort()))
                        .containsPattern("satoken-controlplane \\S+ \\(commit \\S+\\) starting; API server "
                                + Pattern.quote(server.url()))
                        .doesNotContain(server.adminToken());
            }
        }
    }
}
