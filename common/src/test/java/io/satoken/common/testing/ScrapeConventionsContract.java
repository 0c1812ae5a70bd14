package io.satoken.common.testing;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * What every satoken program's first {@code /metrics} scrape keeps: each metric docs/operations.md documents,
 * with its type and label values, and no satoken_ family the page does not list; Prometheus's conventions
 * ({@link PrometheusText#violations()}); the standard process_* set in place of Micrometer's own. A program's test
 * extends it and gives its scrape, its table of the page ({@link OperationsMetrics}), and the families of that table
 * its configuration does not serve before its first event, each with the reason.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
public abstract class ScrapeConventionsContract {

    /** The program's first scrape, before it has served anything. */
    protected abstract PrometheusText scrape();

    /** docs/operations.md's table of the program's metrics. */
    protected abstract List<DocumentedMetric> page();

    /** Families of {@link #page()} that the scraped program does not serve yet, each with the reason. */
    protected abstract Map<String, String> notServedYet();

    /** The page's metrics that the first scrape must serve. */
    public List<DocumentedMetric> documented() {
        assertThat(page().stream().map(DocumentedMetric::family)).as("families said not to be served yet")
                .containsAll(notServedYet().keySet());
        return page().stream().filter(m -> !notServedYet().containsKey(m.family())).toList();
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("documented")
    public void documentedMetric_isServedFromTheStart_withEveryLabelValue(DocumentedMetric metric) {
        metric.assertServedBy(scrape());
    }

    @Test
    public void everyServedSatokenFamily_isInThePage() {
        assertThat(scrape().families().keySet().stream().filter(n -> n.startsWith("satoken_"))
                .filter(n -> !n.endsWith("_max"))).isSubsetOf(page().stream().map(DocumentedMetric::family).toList());
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
