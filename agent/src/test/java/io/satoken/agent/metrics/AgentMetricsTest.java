package io.satoken.agent.metrics;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.satoken.agent.projection.Projection;
import io.satoken.agent.projection.TokenDirectory;
import io.satoken.agent.refresh.RefreshScheduler;
import io.satoken.agent.testing.FakeClock;
import io.satoken.agent.testing.RefreshHarness;
import io.satoken.agent.testing.ScriptedTokenSource;
import io.satoken.agent.token.BoundObjectRef;
import io.satoken.agent.token.TokenCache;
import io.satoken.agent.token.TokenKey;
import io.satoken.agent.token.TokenSource;
import io.satoken.agent.token.TokenSourceException;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class AgentMetricsTest {
    private static final Instant START = RefreshHarness.START;
    private static final TokenKey KEY = new TokenKey("ns", "app", List.of("vault"), 3600, BoundObjectRef.NONE);

    private final FakeClock clock = new FakeClock(START);
    private final AgentMetrics metrics = new AgentMetrics(clock);

    /** Regression: the gauge held its supplier weakly, so it read NaN once a GC had run. */
    @Test
    void csiVolumesGauge_keepsReadingItsSupplier_afterAGarbageCollection() {
        metrics.watchVolumes(() -> 3);
        for (int i = 0; i < 3; i++) {
            System.gc();
        }
        assertThat(metrics.registry().scrape()).contains("satoken_csi_volumes 3.0");
    }

    @Test
    void meteredSource_countsEachCallByResult_andTimesIt() throws Exception {
        ScriptedTokenSource scripted = new ScriptedTokenSource(clock, Duration.ofHours(1));
        scripted.failNext(new TokenSourceException("503", Duration.ofSeconds(1), null),
                new TokenSourceException("404", null, true, null));
        TokenSource source = metrics.metered(scripted);
        assertThatThrownBy(() -> source.issue(KEY)).isInstanceOf(TokenSourceException.class);
        assertThatThrownBy(() -> source.issue(KEY)).isInstanceOf(TokenSourceException.class);
        source.issue(KEY);

        String text = metrics.registry().scrape();
        assertThat(text).contains("satoken_token_requests_total{result=\"retryable\"} 1.0",
                "satoken_token_requests_total{result=\"refused\"} 1.0",
                "satoken_token_requests_total{result=\"success\"} 1.0",
                "satoken_token_request_duration_seconds_count 3",
                "satoken_token_request_duration_seconds_bucket{le=");
    }

    @Test
    void clockSkew_isReportedOnlyBeyondOneSecond() {
        assertThat(metrics.observeIssued(START.plusSeconds(1), null)).isFalse();
        assertThat(metrics.observeIssued(START.minusSeconds(30), START.plusSeconds(90))).isTrue();
        String text = metrics.registry().scrape();
        assertThat(text).contains("satoken_token_clock_skew_total 1.0", "satoken_token_clock_skew_seconds 90.0");
    }

    @Test
    void gauges_readTheCacheAndScheduler(@TempDir Path dir) throws Exception {
        RefreshHarness refresh = RefreshHarness.builder().clock(clock).listener(metrics).build();
        TokenCache cache = refresh.cache();
        RefreshScheduler scheduler = refresh.scheduler();
        metrics.watch(cache, scheduler);
        scheduler.put(new TokenDirectory("a", dir, List.of(new Projection(KEY, "token", 0600, null, null))));
        assertThat(metrics.registry().scrape()).contains("satoken_projections{state=\"pending\"} 1.0");

        clock.runDue();
        clock.advance(Duration.ofMinutes(10));
        cache.get(KEY);
        String text = metrics.registry().scrape();
        assertThat(text).contains("satoken_projections{state=\"ready\"} 1.0",
                "satoken_token_soonest_expiry_seconds 3000.0",
                "satoken_token_cache_total{result=\"hit\"} 1.0",
                "satoken_token_cache_total{result=\"miss\"} 1.0",
                "satoken_file_writes_total{result=\"success\"} 1.0");
        refresh.close();
    }
}
