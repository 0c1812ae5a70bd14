package io.satoken.common.metrics;

import io.micrometer.core.instrument.config.MeterFilter;
import io.micrometer.core.instrument.binder.jvm.JvmGcMetrics;
import io.micrometer.core.instrument.binder.jvm.JvmMemoryMetrics;
import io.micrometer.core.instrument.binder.jvm.JvmThreadMetrics;
import io.micrometer.core.instrument.binder.system.ProcessorMetrics;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.util.Set;

/**
 * The registry a satoken program serves on {@code /metrics}: its own meters, the JVM's ({@code jvm_*}), the
 * standard {@code process_*} set ({@link ProcessMetrics}) and the machine's CPU count and load
 * ({@code system_*}).
 *
 * <p>Micrometer's own process figures are left out where the standard set already says the same in base
 * units: {@code process_cpu_time_ns_total} (nanoseconds; {@code process_cpu_seconds_total}),
 * {@code process_cpu_usage} (the rate of {@code process_cpu_seconds_total}) and {@code process_uptime_seconds}
 * ({@code time() - process_start_time_seconds}).
 */
public final class ProgramRegistry {

    /** Micrometer meter names that duplicate {@link ProcessMetrics}. */
    static final Set<String> DUPLICATES = Set.of("process.cpu.time", "process.cpu.usage", "process.uptime");

    private ProgramRegistry() {
    }

    /** A new registry with the JVM, process and system meters bound. */
    public static PrometheusMeterRegistry create() {
        PrometheusMeterRegistry registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
        registry.config().meterFilter(MeterFilter.deny(id -> DUPLICATES.contains(id.getName())));
        new JvmMemoryMetrics().bindTo(registry);
        new JvmGcMetrics().bindTo(registry);
        new JvmThreadMetrics().bindTo(registry);
        new ProcessorMetrics().bindTo(registry);
        new ProcessMetrics().bindTo(registry);
        return registry;
    }
}
