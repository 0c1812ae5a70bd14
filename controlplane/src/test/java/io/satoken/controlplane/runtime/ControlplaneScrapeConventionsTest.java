package io.satoken.controlplane.runtime;

import static org.assertj.core.api.Assertions.assertThat;

import io.satoken.common.testing.DocumentedMetric;
import io.satoken.common.testing.OperationsMetrics;
import io.satoken.common.testing.PrometheusText;
import io.satoken.common.testing.ScrapeConventionsContract;
import io.satoken.controlplane.testing.ControlplaneScrape;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The control plane's {@code /metrics} as a process with every controller and both webhooks serves it before
 * it has led or answered anything, read against Prometheus conventions and the metrics docs/operations.md documents.
 */
class ControlplaneScrapeConventionsTest extends ScrapeConventionsContract {

    /**
     * docs/operations.md's families that this process does not serve before it has led or answered anything, and
     * why; every other family in the page's table must be served from the first scrape.
     */
    static final Map<String, String> NOT_SERVED_YET = Map.of(
            "satoken_api_requests_total", "a series for each verb and code the API server has answered: none yet",
            "satoken_aggregation_writes_total", "the aggregation controller's, from its first run on",
            "satoken_aggregation_invalid_selectors_total", "the aggregation controller's, from its first run on",
            "satoken_aggregation_queued_total", "the aggregation controller's, from its first run on",
            "satoken_aggregation_aggregating_roles", "the aggregation controller's, from its first run on",
            "satoken_pods_missing_injection", "the injection-check controller's, which runs only when named");

    /** docs/operations.md's table of the control plane's metrics, as the page has it. */
    static final List<DocumentedMetric> DOCUMENTED = OperationsMetrics.table(OperationsMetrics.PAGE,
            "### Control plane");

    private static PrometheusText scrape;
    private static String text;

    @BeforeAll
    static void render(@TempDir Path dir) throws Exception {
        text = ControlplaneScrape.render(dir);
        scrape = PrometheusText.parse(text);
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

    @Test
    void aRouteThatDoesNotMutate_hasNoPatchedSeries() {
        assertThat(text).contains("satoken_webhook_requests_total{path=\"/mutate/pods\",result=\"patched\"} 0.0")
                .doesNotContain("path=\"/validate/serviceaccount-token\",result=\"patched\"")
                .doesNotContain("path=\"other\",result=\"allowed\"");
    }
}
