package io.satoken.agent.metrics;

import static org.assertj.core.api.Assertions.assertThat;

import io.satoken.agent.config.AgentConfigParser;
import io.satoken.agent.runtime.AgentRuntime;
import io.satoken.agent.runtime.TokenConfinement;
import io.satoken.agent.testing.ScriptedTokenSource;
import io.satoken.common.testing.DocumentedMetric;
import io.satoken.common.testing.OperationsMetrics;
import io.satoken.common.testing.PrometheusText;
import io.satoken.common.testing.ScrapeConventionsContract;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.Map;
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

    /**
     * docs/operations.md's families that a fresh agent in this test's configuration does not serve yet, and why; every
     * other family in the page's table must be served from the first scrape.
     */
    static final Map<String, String> NOT_SERVED_YET = Map.of(
            AgentMetrics.SOONEST_EXPIRY, "absent while no token is held (the page says so)",
            TokenConfinement.METRIC, "the check reads the webhook registrations: this agent has no API client",
            "satoken_reload_signals_total", "signals need the pods from the API server: this agent has no API client");

    /** docs/operations.md's table of the agent's metrics, as the page has it. */
    static final List<DocumentedMetric> DOCUMENTED = OperationsMetrics.table(OperationsMetrics.PAGE, "### Agent");

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
    protected List<DocumentedMetric> page() {
        return DOCUMENTED;
    }

    @Override
    protected Map<String, String> notServedYet() {
        return NOT_SERVED_YET;
    }

    /** No token held: the soonest expiry is left out, not NaN and not a 0 that reads as "expiring now". */
    @Test
    void soonestExpiry_isAbsentWhileNoTokenIsHeld() {
        assertThat(scrape.families()).doesNotContainKey(AgentMetrics.SOONEST_EXPIRY);
    }
}
