package io.satoken.e2e;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.satoken.common.testing.KubeApiServer;
import io.satoken.common.testing.RequiresKubeApiServer;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * A full disk costs a new token, never the old one: the agent ({@code run}, static mode, from its launcher,
 * against a real kube-apiserver) writes a token onto a small tmpfs; the tmpfs is then filled to ENOSPC and
 * the config edited so a token for another audience is due. The old file must stay whole (the API server
 * still accepts it), the failing write must be retried (the failure counter keeps growing) and logged
 * naming the directory and the cause, and once space is freed the new token must arrive within the
 * backoff cap (1 min).
 */
@RequiresKubeApiServer
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class DiskFullE2E {

    private static final String TEST = "disk-full";
    private static final String FAILURES = "satoken_file_writes_total";
    private static final String ENOSPC = "No space left on device";
    private static final Duration BACKOFF_CAP = Duration.ofMinutes(1);

    @RegisterExtension
    static final ApiServerFixture API = new ApiServerFixture(TEST);

    private KubeApiServer server;
    private Path mount;
    private boolean mounted;

    @BeforeAll
    void mountTmpfsAndStartServer() throws Exception {
        mount = Files.createTempDirectory("satoken-e2e-diskfull-");
        Commands.Result r = Commands.run("disk-full-mount",
                List.of("mount", "-t", "tmpfs", "-o", "size=1m,mode=0755", "tmpfs", mount.toString()));
        mounted = r.exit() == 0;
        if (!mounted) {
            System.err.println("*** SKIPPED DiskFullE2E: cannot mount a tmpfs (needs root): exit " + r.exit() + " ***");
            Assumptions.assumeTrue(false, "DiskFullE2E needs root to mount a tmpfs");
        }
        server = API.server();
    }

    @AfterAll
    void unmount() throws Exception {
        if (mounted) {
            Commands.run("disk-full-umount", List.of("umount", "-l", mount.toString()));
        }
        Files.deleteIfExists(mount);
    }

    @Test
    void fullDisk_keepsThePreviousToken_retriesTheWrite_andWritesTheNewOneOnceSpaceIsFreed(@TempDir Path etc)
            throws Exception {
        String ns = server.createNamespace("diskfull");
        server.createServiceAccount(ns, "exporter");
        String user = "system:serviceaccount:" + ns + ":exporter";
        Path dir = mount.resolve("exporter");
        Path tokenFile = dir.resolve("token");
        Path config = etc.resolve("agent.yaml");
        Path kubeconfig = etc.resolve("kubeconfig");
        server.writeKubeconfig(kubeconfig, server.adminToken());
        Files.writeString(config, config(ns, "vault", dir));
        String metrics = "127.0.0.1:" + E2E.freePort();

        try (SatokenProcess agent = SatokenProcess.agent("disk-full-agent",
                List.of("run", "--config", config.toString(), "--kubeconfig", kubeconfig.toString(),
                        "--metrics-address", metrics), metrics, Map.of())) {
            agent.awaitReady(Duration.ofSeconds(60));
            String before = IssuedTokens.read(tokenFile);
            assertThat(ApiChecks.audiences(before)).containsExactly("vault");
            assertThat(ApiChecks.accepted(server, before, "vault", user)).as("first token accepted").isTrue();

            long filled = fill(mount.resolve("filler"));
            double failuresBefore = agent.metric(FAILURES, "result=\"failure\"");
            Files.writeString(config, config(ns, "sts", dir));
            long edited = System.nanoTime();

            // The first failure comes with the reload (every 2 s); retries follow at 1, 2, 4 s (with jitter).
            await().atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(200))
                    .until(() -> agent.metric(FAILURES, "result=\"failure\"") >= failuresBefore + 1);
            double first = agent.metric(FAILURES, "result=\"failure\"");
            await().atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(200))
                    .until(() -> agent.metric(FAILURES, "result=\"failure\"") >= first + 3);
            double failures = agent.metric(FAILURES, "result=\"failure\"") - failuresBefore;

            String during = IssuedTokens.read(tokenFile);
            assertThat(during.equals(before)).as("the token file still holds the first token").isTrue();
            assertThat(ApiChecks.accepted(server, during, "vault", user)).as("first token still accepted").isTrue();
            List<String> errorLines = agent.logText().lines()
                    .filter(l -> l.contains(ENOSPC) && l.contains(dir.toString())).toList();
            assertThat(errorLines).as("log lines naming %s and \"%s\"; log %s", dir, ENOSPC, agent.log()).isNotEmpty();
            assertThat(agent.isAlive()).isTrue();

            Files.delete(mount.resolve("filler"));
            long freed = System.nanoTime();
            double full = (freed - edited) / 1e9;
            await().atMost(BACKOFF_CAP.plusSeconds(5)).pollInterval(Duration.ofMillis(200))
                    .until(() -> ApiChecks.audiences(IssuedTokens.read(tokenFile)).equals(List.of("sts")));
            double recovery = (System.nanoTime() - freed) / 1e9;
            String after = IssuedTokens.read(tokenFile);
            assertThat(ApiChecks.accepted(server, after, "sts", user)).as("new token accepted for sts").isTrue();
            assertThat(DemoTokens.entries(dir)).as("the token dir after recovery").hasSize(3)
                    .contains("..data", "token");

            Figures.record(TEST, String.format("disk full: a 1 MiB tmpfs filled (%,d bytes) then a new audience"
                    + " configured: %.0f failed writes retried in the %.1f s from the edit until space was freed (log: %d lines naming the"
                    + " dir and \"%s\"), the previous token stayed whole and accepted; the new token was written %.1f s"
                    + " after the filler was deleted (backoff cap %d s)",
                    filled, failures, full, errorLines.size(), ENOSPC, recovery, BACKOFF_CAP.toSeconds()));
            // a clean shutdown after SIGTERM exits 0, even after a run of failed writes
            int exit = agent.stop();
            Figures.record(TEST, "agent run's exit status after SIGTERM: " + exit);
            assertThat(exit).as("exit status after SIGTERM").isZero();
        }
    }

    /** Writes {@code filler} until the file system says ENOSPC; returns the bytes written. */
    private static long fill(Path filler) throws IOException {
        byte[] chunk = new byte[4096];
        long written = 0;
        try (OutputStream out = Files.newOutputStream(filler)) {
            while (true) {
                out.write(chunk);
                written += chunk.length;
            }
        } catch (IOException e) {
            if (!String.valueOf(e.getMessage()).contains(ENOSPC)) {
                throw e;
            }
        }
        return written;
    }

    private static String config(String namespace, String audience, Path dir) {
        return "mode: static\nprojections:\n"
                + "  - namespace: " + namespace + "\n"
                + "    serviceAccount: exporter\n"
                + "    audiences: [" + audience + "]\n"
                + "    expirationSeconds: 3600\n"
                + "    dir: " + dir + "\n";
    }
}
