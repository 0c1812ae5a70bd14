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
                assertThat(agent.logText()).contains(String.valueOf(taken.getLocalPort()));
            }
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
                assertThat(controlplane.logText()).contains(String.valueOf(taken.getLocalPort()));
            }
        }
    }
}
