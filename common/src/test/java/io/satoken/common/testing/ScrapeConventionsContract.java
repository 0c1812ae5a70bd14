package io.satoken.common.testing;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * What every satoken program's first {@code /metrics} scrape keeps: each metric docs/operations.md documents,
 * with its type and label values; Prometheus's conventions ({@link PrometheusText#violations()}); the standard
 * process_* set in place of Micrometer's own. A program's test extends it and gives its scrape and its table.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
public abstract class ScrapeConventionsContract {

    /** The program's first scrape, before it has served anything. */
    protected abstract PrometheusText scrape();

    /** docs/operations.md's table of the program's metrics. */
    protected abstract List<DocumentedMetric> documented();

    @ParameterizedTest(name = "{0}")
    @MethodSource("documented")
    public void documentedMetric_isServedFromTheStart_withEveryLabelValue(DocumentedMetric metric) {
        metric.assertServedBy(scrape());
    }

    @Test
    public void scrape_keepsPrometheusConventions() {
        assertThat(scrape().violations()).isEmpty();
    }

    @Test
    public void micrometersOwnProcessFigures_areReplacedByTheStandardSet() {
        assertThat(scrape().families()).doesNotContainKeys(
                DocumentedMetric.MICROMETER_PROCESS_FIGURES.toArray(String[]::new));
    }
}
