package io.satoken.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import io.satoken.common.testing.KubeApiServer;
import io.satoken.common.testing.PrometheusText;
import io.satoken.common.testing.RequiresKubeApiServer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.api.parallel.Execution;
import org.junit.jupiter.api.parallel.ExecutionMode;

/**
 * An API server outage across a token's refresh time, with the built agent in static mode as a separate
 * process: while kube-apiserver is down the agent's refreshes fail and are counted, the token already on
 * disk stays there unchanged and unexpired, and once the same server (same port, same etcd, same signing
 * key) is back and ready, a new token is on disk within the agent's backoff cap (60 s, README "How it
 * works").
 *
 * <p>The token lives 600 s, the API server's minimum; the agent refreshes it somewhere between 420 s
 * (80 % minus the full 10 % jitter) and 480 s after issue, so the test takes about nine minutes. The
 * server is kept down until at least one refresh has failed and the token is 510 s old, so the retries
 * have backed off for a while, and is back with about 80 s of the token's life left.
 */
@Execution(ExecutionMode.CONCURRENT) // waits ~9 min for one rotation; see junit-platform.properties
@RequiresKubeApiServer
class OutageE2E {

    private static final String TEST = "outage";
    private static final long LIFETIME_SECONDS = 600;
    private static final Duration BACKOFF_CAP = Duration.ofSeconds(60);
    /** The refreshing request itself, the atomic write and this test's 100 ms polling. */
    private static final Duration SLACK = Duration.ofSeconds(1);
    /** How long after issue the server stays down at least: past every possible refresh time (480 s). */
    private static final Duration KEEP_DOWN_UNTIL_AGE = Duration.ofSeconds(510);

    @RegisterExtension
    static final ApiServerFixture API = new ApiServerFixture(TEST);

    @Test
    void tokenOnDisk_survivesAnApiServerOutageAcrossItsRefreshTime_andIsRefreshedWithinTheBackoffCapOnceTheServerIsBack(
            @TempDir Path tmp) throws Exception {
        KubeApiServer server = API.server();
        SatokenProcess agent = null;
        try {
            String namespace = server.createNamespace("outage");
            server.createServiceAccount(namespace, "exporter");
            Path kubeconfig = tmp.resolve("kubeconfig");
            server.writeKubeconfig(kubeconfig, server.adminToken());
            Path dir = tmp.resolve("tokens");
            Path config = tmp.resolve("agent.yaml");
            Files.writeString(config, """
                    mode: static
                    projections:
                      - namespace: %s
                        serviceAccount: exporter
                        audiences: [outage-e2e]
                        expirationSeconds: %d
                        dir: %s
                    """.formatted(namespace, LIFETIME_SECONDS, dir));
            String metricsAddress = "127.0.0.1:" + E2E.freePort();
            agent = SatokenProcess.agent("outage-agent", List.of("run", "--config", config.toString(),
                    "--kubeconfig", kubeconfig.toString(), "--metrics-address", metricsAddress), metricsAddress, Map.of());
            agent.awaitReady(Duration.ofSeconds(60)); // static mode: ready once the file was written
            Path tokenFile = dir.resolve("token");
            String first = IssuedTokens.read(tokenFile);
            JwtClaims firstClaims = JwtClaims.of(first);
            assertThat(Duration.between(firstClaims.issuedAt(), firstClaims.expiresAt()))
                    .isEqualTo(Duration.ofSeconds(LIFETIME_SECONDS));

            // 1. The outage, right after the first token is written.
            server.stop();
            Instant down = Instant.now();
            int reads = 0;
            Instant restartAt = firstClaims.issuedAt().plus(KEEP_DOWN_UNTIL_AGE);
            // Fail well before the token would expire: the refresh must have failed by its latest time (480 s).
            Instant giveUp = firstClaims.expiresAt().minusSeconds(60);
            double refreshFailures = 0;
            while (refreshFailures < 1 || Instant.now().isBefore(restartAt)) {
                assertThat(Instant.now()).as("a refresh has failed before the token is 540 s old").isBefore(giveUp);
                assertThat(agent.isAlive()).as("agent alive during the outage").isTrue();
                String onDisk = IssuedTokens.read(tokenFile);
                reads++;
                assertThat(onDisk.equals(first)).as("the token on disk is unchanged during the outage").isTrue();
                assertThat(Instant.now()).as("the token on disk is unexpired").isBefore(firstClaims.expiresAt());
                refreshFailures = agent.metric("satoken_token_refreshes_total", "result=\"failure\"");
                SatokenProcess.pause(Duration.ofSeconds(1));
            }
            String during = agent.metrics();
            double failedRefreshes = PrometheusText.value(during, "satoken_token_refreshes_total", "result=\"failure\"");
            double retryable = PrometheusText.value(during, "satoken_token_requests_total", "result=\"retryable\"");
            double refreshingState = PrometheusText.value(during, "satoken_projections", "state=\"refresh_failing\"");
            assertThat(retryable).as("failed TokenRequests counted as retryable").isGreaterThanOrEqualTo(1);
            assertThat(refreshingState).as("the projection is reported as refresh_failing").isEqualTo(1);
            assertThat(agent.isAlive()).isTrue();

            // 2. The server comes back on the same port with the same etcd and signing key.
            server.start();
            Instant ready = Instant.now();
            Duration outage = Duration.between(down, ready);
            String second = first;
            Instant deadline = ready.plus(BACKOFF_CAP).plus(Duration.ofSeconds(30));
            while (second.equals(first) && Instant.now().isBefore(deadline)) {
                SatokenProcess.pause(Duration.ofMillis(100));
                second = IssuedTokens.read(tokenFile);
            }
            Duration toRefresh = Duration.between(ready, Instant.now());
            String after = agent.metrics();
            Figures.record(TEST, String.format("API server down %d s (stopped %d s after the token was issued,"
                            + " back and ready %d s after issue, token lifetime %d s); during the outage: %.0f failed"
                            + " refreshes, %.0f retryable TokenRequests, %d reads of the token file all unchanged and"
                            + " unexpired; new token on disk %.1f s after the server was ready (backoff cap %d s);"
                            + " refreshes after: success %.0f, failure %.0f",
                    outage.toSeconds(), Duration.between(firstClaims.issuedAt(), down).toSeconds(),
                    Duration.between(firstClaims.issuedAt(), ready).toSeconds(), LIFETIME_SECONDS,
                    failedRefreshes, retryable, reads, toRefresh.toMillis() / 1000.0, BACKOFF_CAP.toSeconds(),
                    PrometheusText.value(after, "satoken_token_refreshes_total", "result=\"success\""),
                    PrometheusText.value(after, "satoken_token_refreshes_total", "result=\"failure\"")));

            assertThat(second.equals(first)).as("a new token is on disk after the server came back").isFalse();
            assertThat(toRefresh).as("time from the server being ready to the new token on disk")
                    .isLessThanOrEqualTo(BACKOFF_CAP.plus(SLACK));
            JwtClaims secondClaims = JwtClaims.of(second);
            assertThat(secondClaims.expiresAt()).isAfter(Instant.now().plusSeconds(LIFETIME_SECONDS - 120));
            assertThat(PrometheusText.value(after, "satoken_token_refreshes_total", "result=\"success\""))
                    .as("the refresh is counted as a success").isGreaterThanOrEqualTo(1);
            assertThat(agent.isAlive()).isTrue();
            // it exits by itself, cleanly, within 20 s of SIGTERM (else stop() kills it: 137)
            int status = agent.stop();
            Figures.record(TEST, "agent exit status after SIGTERM: " + status);
            assertThat(status).as("exit status after SIGTERM").isZero();
            assertThat(Files.readString(tokenFile).equals(second)).as("the token file stays after a stop").isTrue();
        } finally {
            if (agent != null) {
                agent.close();
            }
        }
    }
}
