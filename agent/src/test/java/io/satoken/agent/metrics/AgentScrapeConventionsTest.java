package io.satoken.agent.metrics;

import static org.assertj.core.api.Assertions.assertThat;

import io.satoken.agent.config.AgentConfigParser;
import io.satoken.agent.runtime.AgentRuntime;
import io.satoken.agent.testing.ScriptedTokenSource;
import io.satoken.common.testing.DocumentedMetric;
import io.satoken.common.testing.PrometheusText;
import io.satoken.common.testing.ScrapeConventionsContract;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The agent's {@code /metrics} as a freshly built agent serves it (CSI and static mode, before any token or
 * publish), read against Prometheus conventions and against the metrics docs/operations.md documents.
 */
class AgentScrapeConventionsTest extends ScrapeConventionsContract {

    /** docs/operations.md's table of the agent's metrics. */
    static final List<DocumentedMetric> DOCUMENTED = List.of(
            new DocumentedMetric("satoken_token_requests_total", "counter", "result", List.of("refused", "retryable", "success")),
            new DocumentedMetric("satoken_token_request_duration_seconds", "histogram", null, List.of()),
            new DocumentedMetric("satoken_token_cache_total", "counter", "result", List.of("hit", "miss")),
            new DocumentedMetric("satoken_token_refreshes_total", "counter", "result", List.of("failure", "success")),
            new DocumentedMetric("satoken_file_writes_total", "counter", "result", List.of("failure", "success")),
            new DocumentedMetric("satoken_projections", "gauge", "state", List.of("failed", "pending", "ready", "refresh_failing")),
            new DocumentedMetric("satoken_projections_invalid_total", "counter", "source", List.of("config")),
            new DocumentedMetric("satoken_csi_publish_seconds", "histogram", "result", AgentMetrics.CSI_RESULTS.stream().sorted()
                    .toList()),
            new DocumentedMetric("satoken_csi_volumes", "gauge", null, List.of()),
            new DocumentedMetric("satoken_token_clock_skew_seconds", "gauge", null, List.of()),
            new DocumentedMetric("satoken_token_clock_skew_total", "counter", null, List.of()),
            new DocumentedMetric("satoken_events_total", "counter", "result", List.of("created", "failed")),
            new DocumentedMetric("satoken_config_reloads_total", "counter", "result", List.of("failure", "success")),
            new DocumentedMetric("satoken_token_not_reread_total", "counter", null, List.of()),
            new DocumentedMetric("satoken_token_files_not_reread", "gauge", null, List.of()),
            new DocumentedMetric("satoken_token_expiring_unread_total", "counter", null, List.of()),
            new DocumentedMetric("satoken_token_files_expiring_unread", "gauge", null, List.of()),
            new DocumentedMetric("satoken_read_watched_directories", "gauge", null, List.of()));

    private static AgentRuntime agent;
    private static PrometheusText scrape;

    @BeforeAll
    static void buildAgent(@TempDir Path dir) throws Exception {
        String yaml = "mode: both\nkubeletDir: " + dir.resolve("kubelet") + "\nprojections:\n"
                + "  - {namespace: ns, serviceAccount: app, expirationSeconds: 3600, dir: " + dir.resolve("tokens") + "}\n";
        Path configFile = Files.writeString(dir.resolve("agent.yaml"), yaml);
        agent = new AgentRuntime(new AgentRuntime.Settings(AgentConfigParser.parse(yaml), configFile,
                yaml.getBytes(StandardCharsets.UTF_8), "node-1", new InetSocketAddress("127.0.0.1", 0),
                Optional.empty(), "test"), new ScriptedTokenSource(Clock.systemUTC(), Duration.ofHours(1)), null);
        scrape = PrometheusText.parse(agent.metrics().registry().scrape());
    }

    @AfterAll
    static void close() {
        agent.close();
    }

    @Override
    protected PrometheusText scrape() {
        return scrape;
    }

    @Override
    protected List<DocumentedMetric> documented() {
        return DOCUMENTED;
    }

    /** Every satoken_ family the agent serves is in docs/operations.md's table: nothing undocumented. */
    @Test
    void everyServedSatokenMetric_isDocumented() {
        List<String> documented = DOCUMENTED.stream().map(DocumentedMetric::family).toList();
        assertThat(scrape.families().keySet().stream().filter(n -> n.startsWith("satoken_"))
                .filter(n -> !n.endsWith("_max"))).isSubsetOf(documented);
    }

    /** No token held: the soonest expiry is left out, not NaN and not a 0 that reads as "expiring now". */
    @Test
    void soonestExpiry_isAbsentWhileNoTokenIsHeld() {
        assertThat(scrape.families()).doesNotContainKey(AgentMetrics.SOONEST_EXPIRY);
    }
}
