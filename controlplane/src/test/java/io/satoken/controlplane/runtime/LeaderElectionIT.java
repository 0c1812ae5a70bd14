package io.satoken.controlplane.runtime;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.kubernetes.client.openapi.ApiException;
import io.kubernetes.client.openapi.apis.CoordinationV1Api;
import io.kubernetes.client.openapi.models.V1Lease;
import io.satoken.common.testing.KubeApiServer;
import io.satoken.common.testing.RequiresKubeApiServer;
import java.io.IOException;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.time.OffsetDateTime;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Two {@code satoken-controlplane run} processes from the built jar share one Lease: one leads, the other
 * waits; killing the leader hands over within the lease duration; a leader whose Lease is taken exits 1.
 */
@RequiresKubeApiServer
class LeaderElectionIT {

    static final Path JAR = Path.of("target", "satoken-controlplane.jar");
    static final Duration LEASE = Duration.ofSeconds(4);
    static final Duration RETRY = Duration.ofSeconds(1);
    /**
     * client-java's LeaderElector waits {@code RETRY × (1 + 1.2 × random)} between attempts (its jitter factor is
     * 1.2, as client-go's), so a follower can look up to this long apart.
     */
    static final Duration LONGEST_POLL = Duration.ofMillis(RETRY.toMillis() * 22 / 10);
    /**
     * A follower takes the Lease on the first attempt at least {@code LEASE} after it saw the last renewal, and it
     * sees that renewal at most one poll late: the acquire time is at most {@code LEASE + 2 polls} after the last
     * renewal, plus the two requests' own time (a second on this shared machine).
     */
    static final Duration ACQUIRE_BOUND = LEASE.plus(LONGEST_POLL.multipliedBy(2)).plusSeconds(1);

    @TempDir
    Path tmp;
    final List<Process> processes = new ArrayList<>();
    final HttpClient http = HttpClient.newHttpClient();

    @AfterEach
    void kill() {
        processes.forEach(Process::destroyForcibly);
    }

    @Test
    void oneLeads_killingItHandsOverWithinTheLease_aLeaderThatLosesItsLeaseExits1(KubeApiServer server)
            throws Exception {
        assertThat(JAR).as("built by mvn package before the *IT phase").isRegularFile();
        String ns = server.createNamespace("lease");
        Path kubeconfig = tmp.resolve("kubeconfig");
        server.writeKubeconfig(kubeconfig, server.adminToken());
        int[] ports = {freePort(), freePort()};
        Process a = launch(kubeconfig, ns, ports[0], "a");
        Process b = launch(kubeconfig, ns, ports[1], "b");
        CoordinationV1Api coordination = new CoordinationV1Api(server.adminClient());

        await().atMost(Duration.ofSeconds(30)).until(() -> leader(ports[0]) + leader(ports[1]) == 1);
        int leaderIndex = leader(ports[0]) == 1 ? 0 : 1;
        Process leader = leaderIndex == 0 ? a : b;
        Process follower = leaderIndex == 0 ? b : a;
        int followerPort = ports[1 - leaderIndex];
        for (int i = 0; i < 3; i++) { // still exactly one after a few renewals
            Thread.sleep(RETRY.toMillis());
            assertThat(leader(ports[0]) + leader(ports[1])).isEqualTo(1);
        }
        V1Lease before = coordination.readNamespacedLease("satoken-controlplane", ns).execute();
        String holder = before.getSpec().getHolderIdentity();

        long killed = System.nanoTime();
        leader.destroyForcibly().waitFor();
        // the acquire loop checks for success once per retry period before it starts leading and sets the gauge
        await().atMost(ACQUIRE_BOUND.plus(RETRY)).pollInterval(Duration.ofMillis(100))
                .until(() -> leader(followerPort) == 1);
        Duration handover = Duration.ofNanos(System.nanoTime() - killed);
        V1Lease after = coordination.readNamespacedLease("satoken-controlplane", ns).execute();
        assertThat(after.getSpec().getHolderIdentity()).isNotEqualTo(holder);
        Duration sinceLastRenewal = Duration.between(before.getSpec().getRenewTime(), after.getSpec().getAcquireTime());
        System.err.printf("leader election: new leader acquired %d ms after the old one's last renewal,"
                + " %d ms after the kill (lease %d s, retry %d s)%n", sinceLastRenewal.toMillis(), handover.toMillis(),
                LEASE.toSeconds(), RETRY.toSeconds());
        assertThat(sinceLastRenewal).isGreaterThanOrEqualTo(LEASE).isLessThanOrEqualTo(ACQUIRE_BOUND);

        // The leader renews every retry period, so a read-modify-write can meet a newer version (409): read again.
        for (int attempt = 1; ; attempt++) {
            V1Lease lease = coordination.readNamespacedLease("satoken-controlplane", ns).execute();
            lease.getSpec().holderIdentity("someone-else").leaseDurationSeconds(600).renewTime(OffsetDateTime.now());
            try {
                coordination.replaceNamespacedLease("satoken-controlplane", ns, lease).execute();
                break;
            } catch (ApiException e) {
                if (e.getCode() != 409 || attempt == 10) {
                    throw e;
                }
            }
        }

        assertThat(follower.waitFor(LEASE.toSeconds() + 10, TimeUnit.SECONDS)).as("exits after losing the Lease").isTrue();
        assertThat(follower.exitValue()).isEqualTo(1);
    }

    private Process launch(Path kubeconfig, String ns, int port, String name) throws IOException {
        Process p = new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-jar", JAR.toString(), "run", "--kubeconfig", kubeconfig.toString(),
                "--controllers=serviceaccounts", "--leader-elect-namespace=" + ns,
                "--leader-elect-lease-duration=" + LEASE.toSeconds() + "s", "--leader-elect-renew-deadline=3s",
                "--leader-elect-retry-period=" + RETRY.toSeconds() + "s", "--metrics-address=127.0.0.1:" + port)
                .redirectErrorStream(true)
                .redirectOutput(tmp.resolve(name + ".log").toFile())
                .start();
        processes.add(p);
        return p;
    }

    /** 1 when the process at {@code port} reports that it leads, 0 otherwise (or when it is gone). */
    private int leader(int port) {
        try {
            String metrics = http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/metrics"))
                    .timeout(Duration.ofSeconds(2)).build(), HttpResponse.BodyHandlers.ofString()).body();
            return metrics.lines().anyMatch(l -> l.startsWith("satoken_controlplane_leader 1")) ? 1 : 0;
        } catch (IOException e) {
            return 0;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return 0;
        }
    }

    private static int freePort() throws IOException {
        try (ServerSocket s = new ServerSocket(0)) {
            return s.getLocalPort();
        }
    }
}
