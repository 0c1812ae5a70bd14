package io.satoken.common.metrics;

import static org.assertj.core.api.Assertions.assertThat;

import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import io.satoken.common.testing.PrometheusText;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.OptionalDouble;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class ProcessMetricsTest {

    private static final String STATUS = "Name:\tjava\nVmPeak:\t 5000000 kB\nVmSize:\t 4000000 kB\nVmRSS:\t  123456 kB\n";
    private static final String LIMITS = """
            Limit                     Soft Limit           Hard Limit           Units
            Max cpu time              unlimited            unlimited            seconds
            Max open files            1024                 524288               files
            """;

    @Test
    void procSelf_givesTheStandardSetInBaseUnits(@TempDir Path proc) throws Exception {
        Files.writeString(proc.resolve("status"), STATUS);
        Files.writeString(proc.resolve("limits"), LIMITS);
        Files.createDirectories(proc.resolve("fd"));
        for (int fd = 0; fd < 7; fd++) {
            Files.createFile(proc.resolve("fd").resolve(String.valueOf(fd)));
        }
        PrometheusMeterRegistry registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
        new ProcessMetrics(proc, () -> OptionalDouble.of(12.5), 1.7e9).bindTo(registry);

        assertThat(registry.scrape()).contains(
                "process_cpu_seconds_total 12.5",
                "process_resident_memory_bytes 1.26418944E8",
                "process_virtual_memory_bytes 4.096E9",
                "process_open_fds 7.0",
                "process_max_fds 1024.0",
                "process_start_time_seconds 1.7E9");
    }

    @Test
    void withoutProc_theFiguresItGivesAreLeftOut_notNaN(@TempDir Path empty) {
        PrometheusMeterRegistry registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
        new ProcessMetrics(empty.resolve("absent"), OptionalDouble::empty, 1.7e9).bindTo(registry);

        String text = registry.scrape();
        assertThat(text).doesNotContain("NaN", "process_resident_memory_bytes", "process_open_fds",
                "process_cpu_seconds_total");
        assertThat(text).contains("process_start_time_seconds 1.7E9");
    }

    /** A /proc file that goes missing after binding repeats its last value. */
    @Test
    void aFailedRead_repeatsTheLastValue(@TempDir Path proc) throws Exception {
        Files.writeString(proc.resolve("status"), STATUS);
        PrometheusMeterRegistry registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
        new ProcessMetrics(proc, OptionalDouble::empty, 0).bindTo(registry);
        Files.delete(proc.resolve("status"));

        assertThat(registry.scrape()).contains("process_resident_memory_bytes 1.26418944E8").doesNotContain("NaN");
    }

    @Test
    void programRegistry_keepsPrometheusConventions_onThisMachine() {
        PrometheusText scrape = PrometheusText.parse(ProgramRegistry.create().scrape());
        assertThat(scrape.violations()).isEmpty();
        assertThat(scrape.families()).doesNotContainKeys("process_cpu_time_ns_total", "process_cpu_usage",
                "process_uptime_seconds");
    }
}
