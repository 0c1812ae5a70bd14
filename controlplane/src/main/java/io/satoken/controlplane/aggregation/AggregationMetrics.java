package io.satoken.controlplane.aggregation;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import java.util.function.IntSupplier;

/** What the aggregation controller reports beyond every loop's queue and reconcile figures. */
final class AggregationMetrics {

    private final Counter applies;
    private final Counter updates;
    private final Counter invalidSelectors;
    private final Counter queuedByEvents;
    private final MeterRegistry registry;

    AggregationMetrics(MeterRegistry registry) {
        this.registry = registry;
        this.applies = writes(registry, "apply");
        this.updates = writes(registry, "update");
        this.invalidSelectors = Counter.builder("satoken_aggregation_invalid_selectors_total")
                .description("Syncs skipped because the role's aggregationRule has an invalid selector")
                .register(registry);
        this.queuedByEvents = Counter.builder("satoken_aggregation_queued_total")
                .description("Aggregating roles queued by ClusterRole events (upstream queues all of them on each)")
                .register(registry);
    }

    private static Counter writes(MeterRegistry registry, String kind) {
        return Counter.builder("satoken_aggregation_writes_total")
                .description("ClusterRole writes by kind: server-side apply, or update after an apply got 415")
                .tag("kind", kind)
                .register(registry);
    }

    void aggregatingRoles(IntSupplier count) {
        Gauge.builder("satoken_aggregation_aggregating_roles", count::getAsInt)
                .description("ClusterRoles with a valid aggregationRule")
                .register(registry);
    }

    void applied() {
        applies.increment();
    }

    void updated() {
        updates.increment();
    }

    void invalidSelector() {
        invalidSelectors.increment();
    }

    void queued(int roles) {
        queuedByEvents.increment(roles);
    }
}
