package io.satoken.controlplane.runtime;

import static org.assertj.core.api.Assertions.assertThat;

import io.satoken.common.testing.DocumentedMetric;
import io.satoken.common.testing.PrometheusText;
import io.satoken.common.testing.ScrapeConventionsContract;
import io.satoken.controlplane.testing.ControlplaneScrape;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The control plane's {@code /metrics} as a process with every controller and both webhooks serves it before
 * it has led or answered anything, read against Prometheus conventions and the metrics docs/operations.md documents.
 */
class ControlplaneScrapeConventionsTest extends ScrapeConventionsContract {

    private static final List<String> LOOPS = List.of("aggregation", "root-ca", "serviceaccounts",
            "tokens-secrets", "tokens-serviceaccounts");
    private static final List<String> PATHS = List.of("/mutate/pods", "/mutate/pods/agent-tokens",
            "/validate/serviceaccount-token", "other");

    /** docs/operations.md's metrics of the control plane; those of the aggregation controller appear once it runs. */
    static final List<DocumentedMetric> DOCUMENTED = List.of(
            new DocumentedMetric("satoken_controlplane_leader", "gauge", null, List.of()),
            new DocumentedMetric("satoken_controller_reconcile_seconds", "histogram", "controller", LOOPS),
            new DocumentedMetric("satoken_controller_reconcile_seconds", "histogram", "result", List.of("done", "retry")),
            new DocumentedMetric("satoken_controller_queue_depth", "gauge", "controller", LOOPS),
            new DocumentedMetric("satoken_controller_dropped_keys_total", "counter", "controller", LOOPS),
            new DocumentedMetric("satoken_webhook_requests_total", "counter", "path", PATHS),
            new DocumentedMetric("satoken_webhook_requests_total", "counter", "result", List.of("allowed", "denied", "error",
                    "invalid", "overloaded", "patched", "timeout")),
            new DocumentedMetric("satoken_webhook_request_duration_seconds", "histogram", "path", PATHS),
            new DocumentedMetric("satoken_webhook_certificate_expiry_timestamp_seconds", "gauge", null, List.of()),
            new DocumentedMetric("satoken_webhook_certificate_reloads_total", "counter", null, List.of()));

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
    protected List<DocumentedMetric> documented() {
        return DOCUMENTED;
    }

    @Test
    void aRouteThatDoesNotMutate_hasNoPatchedSeries() {
        assertThat(text).contains("satoken_webhook_requests_total{path=\"/mutate/pods\",result=\"patched\"} 0.0")
                .doesNotContain("path=\"/validate/serviceaccount-token\",result=\"patched\"")
                .doesNotContain("path=\"other\",result=\"allowed\"");
    }
}
