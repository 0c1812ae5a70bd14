package io.satoken.controlplane.https;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import java.time.Duration;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The webhook's metrics: {@code satoken_webhook_requests_total{path,result}}, the time from a complete
 * request to its answer ({@code satoken_webhook_request_duration_seconds{path}}, a histogram), and the
 * serving certificate's expiry and reloads.
 *
 * <p>Results: {@code allowed}, {@code patched}, {@code denied} (a rule said no), {@code invalid} (a
 * malformed review), {@code timeout}, {@code overloaded}, {@code error} (the webhook itself failed);
 * paths outside the routes count under {@code other}. {@link #expect} puts every result a path can
 * have at 0, so rates and alerts have their series from the first scrape.
 */
public final class WebhookMetrics {

    static final String OTHER = "other";
    /** What a route's review can end as; {@code patched} only where the route mutates. */
    static final List<String> RESULTS = List.of("allowed", "patched", "denied", "invalid", "timeout", "overloaded",
            "error");
    /** What a request outside the routes can end as. */
    static final List<String> OTHER_RESULTS = List.of("invalid", "timeout", "overloaded");

    /** A review answers within a millisecond from the caches; slower ones wait on the API server (timeout: 8 s). */
    private static final Duration[] BUCKETS = {Duration.ofNanos(500_000), Duration.ofMillis(1),
            Duration.ofNanos(2_500_000), Duration.ofMillis(5), Duration.ofMillis(10), Duration.ofMillis(25),
            Duration.ofMillis(50), Duration.ofMillis(100), Duration.ofMillis(250), Duration.ofMillis(500),
            Duration.ofSeconds(1)};

    private final MeterRegistry registry;
    private final Map<String, Counter> counters = new ConcurrentHashMap<>();
    private final Map<String, Timer> timers = new ConcurrentHashMap<>();
    private final Counter reloads;

    public WebhookMetrics(MeterRegistry registry, ServingCertificate certificate) {
        this.registry = registry;
        Gauge.builder("satoken_webhook_certificate_expiry_timestamp_seconds",
                        () -> certificate.notAfter().getEpochSecond())
                .description("notAfter of the serving certificate, as Unix time in seconds")
                .register(registry);
        this.reloads = Counter.builder("satoken_webhook_certificate_reloads_total")
                .description("Times a changed certificate or key file was taken")
                .register(registry);
        OTHER_RESULTS.forEach(result -> counter(OTHER, result));
        timer(OTHER);
    }

    /** Registers every result of each route at 0; only a {@code /mutate/} route can answer {@code patched}. */
    void expect(Collection<String> routes) {
        for (String path : routes) {
            RESULTS.stream().filter(r -> !r.equals("patched") || path.startsWith("/mutate/"))
                    .forEach(result -> counter(path, result));
            timer(path);
        }
    }

    /** Counts a reload of the serving certificate. */
    public void reloaded() {
        reloads.increment();
    }

    void answered(String path, String result, Duration took) {
        counter(path, result).increment();
        timer(path).record(took);
    }

    private Counter counter(String path, String result) {
        return counters.computeIfAbsent(path + ' ' + result, key -> Counter.builder("satoken_webhook_requests_total")
                .description("Admission requests answered, by path and result")
                .tag("path", path).tag("result", result).register(registry));
    }

    private Timer timer(String path) {
        return timers.computeIfAbsent(path, key -> Timer.builder("satoken_webhook_request_duration_seconds")
                .description("Time from a complete admission request to its answer, by path")
                .tag("path", path)
                .serviceLevelObjectives(BUCKETS)
                .publishPercentileHistogram(false)
                .register(registry));
    }
}
