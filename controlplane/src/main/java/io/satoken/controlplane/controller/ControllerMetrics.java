package io.satoken.controlplane.controller;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import java.time.Duration;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.IntSupplier;

/**
 * What every controller loop reports, labelled by controller (loop) name. {@link #expect} registers a loop's
 * series at 0 before it runs, so a follower, and a leader whose caches are still syncing, show every loop.
 */
public final class ControllerMetrics {

    /** A reconcile reads the caches and makes at most a few API calls: milliseconds, seconds when the API is slow. */
    private static final Duration[] BUCKETS = {Duration.ofMillis(1), Duration.ofMillis(5), Duration.ofMillis(10),
            Duration.ofMillis(50), Duration.ofMillis(100), Duration.ofMillis(250), Duration.ofMillis(500),
            Duration.ofSeconds(1), Duration.ofMillis(2500), Duration.ofSeconds(5), Duration.ofSeconds(10)};

    private final MeterRegistry registry;
    private final Map<String, AtomicReference<IntSupplier>> depths = new ConcurrentHashMap<>();

    public ControllerMetrics(MeterRegistry registry) {
        this.registry = registry;
    }

    /** The registry, for a controller's own meters next to these. */
    public MeterRegistry registry() {
        return registry;
    }

    /** Registers {@code controller}'s series at 0: queue depth, reconciles by result, dropped keys. */
    public void expect(String controller) {
        depth(controller);
        for (Reconciler.Result result : Reconciler.Result.values()) {
            reconcileTimer(controller, result);
        }
        dropped(controller);
    }

    void queueDepth(String controller, IntSupplier depth) {
        depth(controller).set(depth);
    }

    void reconciled(String controller, Reconciler.Result result, long nanos) {
        reconcileTimer(controller, result).record(nanos, TimeUnit.NANOSECONDS);
    }

    void droppedAfterRetries(String controller) {
        dropped(controller).increment();
    }

    private AtomicReference<IntSupplier> depth(String controller) {
        return depths.computeIfAbsent(controller, c -> {
            AtomicReference<IntSupplier> holder = new AtomicReference<>(() -> 0);
            Gauge.builder("satoken_controller_queue_depth", () -> holder.get().getAsInt())
                    .description("Keys waiting in the controller's work queue")
                    .tag("controller", c)
                    .register(registry);
            return holder;
        });
    }

    private Timer reconcileTimer(String controller, Reconciler.Result result) {
        return Timer.builder("satoken_controller_reconcile")
                .description("Reconcile calls by controller and result (done, retry), and their duration")
                .tag("controller", controller)
                .tag("result", result.name().toLowerCase(Locale.ROOT))
                .serviceLevelObjectives(BUCKETS)
                .publishPercentileHistogram(false)
                .register(registry);
    }

    private Counter dropped(String controller) {
        return Counter.builder("satoken_controller_dropped_keys_total")
                .description("Keys given up after the controller's maximum retries")
                .tag("controller", controller)
                .register(registry);
    }
}
