package io.satoken.controlplane.kube;

import static org.assertj.core.api.Assertions.assertThat;

import io.kubernetes.client.openapi.ApiException;
import io.kubernetes.client.openapi.models.V1Namespace;
import io.satoken.common.logging.LogFormat;
import io.satoken.common.logging.LogLevel;
import io.satoken.common.testing.CapturedLogs;
import java.net.ConnectException;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** An informer's failed lists and watches while the API server is down: one line each, and attempts that back off. */
class ListWatchBackoffTest {

    private static final ApiException REFUSED = new ApiException(new ConnectException("Failed to connect to /10.0.0.1:6443"));

    private Instant now = Instant.parse("2026-01-01T00:00:00Z");
    private final List<Duration> slept = new ArrayList<>();
    private final ListWatchBackoff<V1Namespace> backoff = new ListWatchBackoff<>("namespaces", () -> now, d -> {
        slept.add(d);
        now = now.plus(d);
    });

    @Test
    void outage_costsOneLinePerAttempt_andAttemptsBackOffTo30s() {
        try (CapturedLogs logs = CapturedLogs.start(LogLevel.INFO, LogFormat.TEXT)) {
            for (int i = 0; i < 8; i++) {
                fail(REFUSED);
            }

            assertThat(logs.lines()).hasSize(8);
            assertThat(logs.lines().get(0)).contains("WARN", "listing and watching namespaces failed (attempt 1); "
                    + "retrying in 1s: no answer from the API server: Failed to connect to "
                    + "/10.0.0.1:6443").doesNotContain("HTTP response", "\tat ");
            assertThat(logs.lines().get(3)).contains("(attempt 4); retrying in 8s");
            assertThat(logs.lines().get(7)).contains("(attempt 8); retrying in 30s");
        }
        // client-java waits 1 s itself after each failure: held 0s, 1s, 3s, ... so attempts come 1s, 2s, 4s ... apart
        assertThat(slept).containsExactly(Duration.ZERO, Duration.ofSeconds(1), Duration.ofSeconds(3),
                Duration.ofSeconds(7), Duration.ofSeconds(15), Duration.ofSeconds(29), Duration.ofSeconds(29),
                Duration.ofSeconds(29));
    }

    @Test
    void failureLongAfterTheLast_isANewOutage_countedFromOne() {
        try (CapturedLogs logs = CapturedLogs.start(LogLevel.INFO, LogFormat.TEXT)) {
            fail(REFUSED);
            fail(REFUSED);
            now = now.plus(Duration.ofHours(3)); // a watch ran for hours, then broke
            fail(new ApiException(503, Map.of(), "{\"kind\":\"Status\",\"message\":\"the server is shutting down\"}"));

            assertThat(logs.lines().get(2)).contains("(attempt 1); retrying in 1s: 503 Service Unavailable: the server is shutting down");
        }
    }

    @Test
    void stoppingTheInformer_interruptsTheWait_andLaterFailuresCostNoLine() {
        ListWatchBackoff<V1Namespace> stopped = new ListWatchBackoff<>("namespaces", () -> now, d -> {
            throw new InterruptedException();
        });
        try (CapturedLogs logs = CapturedLogs.start(LogLevel.INFO, LogFormat.TEXT)) {
            stopped.accept(V1Namespace.class, REFUSED); // logged; its wait is interrupted
            assertThat(Thread.currentThread().isInterrupted()).as("the interrupt is kept for client-java").isTrue();
            stopped.accept(V1Namespace.class, REFUSED); // the thread is being stopped: no line

            assertThat(logs.lines()).hasSize(1);
        } finally {
            Thread.interrupted();
        }
    }

    @Test
    void atDebug_theStackTraceFollows() {
        try (CapturedLogs logs = CapturedLogs.start(LogLevel.DEBUG, LogFormat.TEXT)) {
            fail(REFUSED);

            assertThat(logs.lines().get(0)).contains("(attempt 1)");
            assertThat(logs.lines()).anySatisfy(l -> assertThat(l).startsWith("\tat "));
        }
    }

    @Test
    void clientJavasReflector_sayingItStartsOver_isNotLogged() {
        try (CapturedLogs logs = CapturedLogs.start(LogLevel.DEBUG, LogFormat.TEXT)) {
            org.slf4j.LoggerFactory.getLogger("io.kubernetes.client.informer.cache.ReflectorRunnable")
                    .info("class V1Namespace#Start listing and watching...");

            assertThat(logs.lines()).isEmpty();
        }
    }

    private void fail(Throwable error) {
        backoff.accept(V1Namespace.class, error);
        now = now.plus(ListWatchBackoff.CLIENT_PAUSE);
    }
}
