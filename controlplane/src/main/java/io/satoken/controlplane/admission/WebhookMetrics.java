package io.satoken.controlplane.admission;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The webhook's metrics: {@code satoken_webhook_requests_total{path,result}}, the time from a complete
 * request to its answer ({@code satoken_webhook_request_duration_seconds{path}}, a histogram), and the
 * serving certificate's expiry and reloads.
 *
 * <p>Results: {@code allowed}, {@code patched}, {@code denied} (a rule said no), {@code invalid} (a
 * malformed review), {@code timeout}, {@code overloaded}, {@code error} (the webhook itself failed);
 * paths outside the routes count under
 * {@code other}.
 */
final class WebhookMetrics {

    private final MeterRegistry registry;
    private final Map<String, Counter> counters = new ConcurrentHashMap<>();
    private final Map<String, Timer> timers = new ConcurrentHashMap<>();
    private final Counter reloads;

    WebhookMetrics(MeterRegistry registry, ServingCertificate certificate) {
        this.registry = registry;
        Gauge.builder("satoken_webhook_certificate_expiry_timestamp_seconds",
                        () -> certificate.notAfter().getEpochSecond())
                .description("notAfter of the serving certificate, as Unix time")
                .register(registry);
        this.reloads = Counter.builder("satoken_webhook_certificate_reloads_total")
                .description("times a changed certificate or key file was taken")
                .register(registry);
    }

    void reloaded() {
        reloads.increment();
    }

    void answered(String path, String result, Duration took) {
        counters.computeIfAbsent(path + ' ' + result, key -> Counter.builder("satoken_webhook_requests_total")
                .description("admission requests answered, by path and result")
                .tag("path", path).tag("result", result).register(registry)).increment();
        timers.computeIfAbsent(path, key -> Timer.builder("satoken_webhook_request_duration_seconds")
                .description("from a complete request to its answer")
                .tag("path", path)
                .publishPercentileHistogram()
                .minimumExpectedValue(Duration.ofNanos(100_000))
                .maximumExpectedValue(Duration.ofSeconds(30))
                .register(registry)).record(took);
    }
}
