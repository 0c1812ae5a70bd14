package io.satoken.controlplane.controller;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import java.util.concurrent.TimeUnit;
import java.util.function.IntSupplier;

/** What every controller loop reports, labelled by controller name. */
public final class ControllerMetrics {

    private final MeterRegistry registry;

    public ControllerMetrics(MeterRegistry registry) {
        this.registry = registry;
    }

    /** The registry, for a controller's own meters next to these. */
    public MeterRegistry registry() {
        return registry;
    }

    void queueDepth(String controller, IntSupplier depth) {
        Gauge.builder("satoken_controller_queue_depth", depth::getAsInt)
                .description("Keys waiting in the controller's work queue")
                .tag("controller", controller)
                .register(registry);
    }

    void reconciled(String controller, Reconciler.Result result, long nanos) {
        Timer.builder("satoken_controller_reconcile")
                .description("Reconcile calls by controller and result (done, retry)")
                .tag("controller", controller)
                .tag("result", result.name().toLowerCase(java.util.Locale.ROOT))
                .register(registry)
                .record(nanos, TimeUnit.NANOSECONDS);
    }

    void droppedAfterRetries(String controller) {
        Counter.builder("satoken_controller_dropped_keys_total")
                .description("Keys given up after the controller's maximum retries")
                .tag("controller", controller)
                .register(registry)
                .increment();
    }
}
