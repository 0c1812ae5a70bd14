package io.satoken.common.testing;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;

/**
 * A metric family as docs/operations.md documents it ({@link OperationsMetrics}): its name, its type, and the values
 * its label must show from a program's first scrape ({@code label} null for a family without one, or whose values
 * come from outside); with {@code selectable}, the values are the most it may show, as many as the program's
 * flags select. Both programs' scrape convention tests check their documented table with it.
 */
public record DocumentedMetric(String family, String type, String label, List<String> values, boolean selectable) {

    /** Micrometer's own process figures, which every program replaces with {@link PrometheusText#PROCESS_SET}. */
    public static final List<String> MICROMETER_PROCESS_FIGURES = List.of("process_cpu_time_ns_total",
            "process_cpu_usage", "process_uptime_seconds");

    /** Fails unless {@code scrape} serves this family, with this type and, for the label, exactly these values. */
    public void assertServedBy(PrometheusText scrape) {
        PrometheusText.Family served = scrape.families().get(family);
        assertThat(served).as(family).isNotNull();
        assertThat(served.type()).as(family).isEqualTo(type);
        if (label != null && selectable) {
            assertThat(served.labelValues(label)).as(toString()).isNotEmpty().isSubsetOf(values);
        } else if (label != null) {
            assertThat(served.labelValues(label)).as(toString()).containsExactlyElementsOf(values);
        }
    }

    @Override
    public String toString() {
        return family + (label == null ? "" : "{" + label + "}");
    }
}
