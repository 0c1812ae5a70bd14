package io.satoken.agent.metrics;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.Timer;
import io.micrometer.core.instrument.binder.jvm.JvmGcMetrics;
import io.micrometer.core.instrument.binder.jvm.JvmMemoryMetrics;
import io.micrometer.core.instrument.binder.jvm.JvmThreadMetrics;
import io.micrometer.core.instrument.binder.system.ProcessorMetrics;
import io.micrometer.core.instrument.binder.system.UptimeMetrics;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import io.satoken.agent.projection.Projection;
import io.satoken.agent.projection.TokenDirectory;
import io.satoken.agent.refresh.RefreshListener;
import io.satoken.agent.refresh.RefreshScheduler;
import io.satoken.agent.token.IssuedToken;
import io.satoken.agent.token.TokenCache;
import io.satoken.agent.token.TokenKey;
import io.satoken.agent.token.TokenSource;
import io.satoken.agent.token.TokenSourceException;
import java.time.Duration;
import java.time.Instant;
import java.time.InstantSource;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The agent's Prometheus metrics, in one place so their names and labels read as one table:
 *
 * <pre>
 * satoken_token_requests_total{result=success|retryable|refused}  TokenRequest calls
 * satoken_token_request_duration_seconds (histogram)                TokenRequest latency
 * satoken_token_cache_total{result=hit|miss}                        token lookups
 * satoken_token_refreshes_total{result=success|failure}             refreshes of a served token
 * satoken_token_soonest_expiry_seconds                              until the soonest token expires
 * satoken_file_writes_total{result=success|failure}                 token files (re)written
 * satoken_projections{state=pending|ready|refresh_failing|failed}   token files by state
 * satoken_projections_invalid_total{source=config}                  rejected configs
 * satoken_csi_publish_seconds{result=success|invalid_argument|...}   NodePublishVolume calls (summary)
 * satoken_csi_volumes                                               CSI volumes published on this node
 * satoken_token_clock_skew_seconds                                  last token's iat minus local time
 * satoken_token_clock_skew_total                                    tokens issued in the local future
 * satoken_events_total{result=created|failed}                       Kubernetes Events sent
 * satoken_config_reloads_total{result=success|failure}              static-config reloads
 * </pre>
 */
public final class AgentMetrics implements RefreshListener {

    /** iat and nbf are whole seconds: a server up to a second ahead is rounding, not skew. */
    public static final Duration SKEW_TOLERANCE = Duration.ofSeconds(1);

    private final PrometheusMeterRegistry registry;
    private final InstantSource clock;
    private final Timer requestDuration;
    private final Counter writesOk;
    private final Counter writesFailed;
    private final Counter refreshesOk;
    private final Counter refreshesFailed;
    private final Counter skewed;
    private final AtomicLong lastSkewMillis = new AtomicLong();

    public AgentMetrics(InstantSource clock) {
        this(new PrometheusMeterRegistry(PrometheusConfig.DEFAULT), clock);
    }

    public AgentMetrics(PrometheusMeterRegistry registry, InstantSource clock) {
        this.registry = registry;
        this.clock = clock;
        // the usual JVM and process figures, so heap, GC and CPU show next to the agent's own
        new JvmMemoryMetrics().bindTo(registry);
        new JvmGcMetrics().bindTo(registry);
        new JvmThreadMetrics().bindTo(registry);
        new ProcessorMetrics().bindTo(registry);
        new UptimeMetrics().bindTo(registry);
        this.requestDuration = Timer.builder("satoken.token.request.duration")
                .description("TokenRequest latency")
                .publishPercentileHistogram()
                .minimumExpectedValue(Duration.ofMillis(1))
                .maximumExpectedValue(Duration.ofSeconds(60))
                .register(registry);
        this.writesOk = counter("satoken.file.writes", "result", "success");
        this.writesFailed = counter("satoken.file.writes", "result", "failure");
        this.refreshesOk = counter("satoken.token.refreshes", "result", "success");
        this.refreshesFailed = counter("satoken.token.refreshes", "result", "failure");
        this.skewed = Counter.builder("satoken.token.clock.skew")
                .description("tokens whose iat or nbf lies in the local clock's future").register(registry);
        Gauge.builder("satoken.token.clock.skew.seconds", lastSkewMillis, ms -> ms.get() / 1000.0)
                .description("the last issued token's iat minus the local time").register(registry);
    }

    public PrometheusMeterRegistry registry() {
        return registry;
    }

    /** Wraps a source so each call is counted by result and timed. */
    public TokenSource metered(TokenSource source) {
        return key -> {
            long start = System.nanoTime();
            String result = "success";
            try {
                return source.issue(key);
            } catch (TokenSourceException e) {
                result = e.permanent() ? "refused" : "retryable";
                throw e;
            } catch (RuntimeException e) {
                result = "retryable";
                throw e;
            } finally {
                requestDuration.record(Duration.ofNanos(System.nanoTime() - start));
                counter("satoken.token.requests", "result", result).increment();
            }
        };
    }

    /** Registers the gauges and counters read from the cache and scheduler. */
    public void watch(TokenCache cache, RefreshScheduler scheduler) {
        FunctionCounter.builder("satoken.token.cache", cache, TokenCache::hits).tag("result", "hit").register(registry);
        FunctionCounter.builder("satoken.token.cache", cache, TokenCache::misses).tag("result", "miss").register(registry);
        Gauge.builder("satoken.token.soonest.expiry.seconds", scheduler,
                        s -> s.soonestExpiry().map(exp -> Duration.between(clock.instant(), exp).toMillis() / 1000.0)
                                .orElse(Double.NaN))
                .description("seconds until the soonest-expiring token held for a file expires")
                .register(registry);
        for (RefreshScheduler.State state : RefreshScheduler.State.values()) {
            Gauge.builder("satoken.projections", scheduler, s -> s.projectionStates().get(state))
                    .tag("state", state.name().toLowerCase(Locale.ROOT))
                    .description("token files by state").register(registry);
        }
    }

    /**
     * A NodePublishVolume was answered after {@code took}: {@code result} is {@code success}, or the gRPC
     * status code in lower case ({@code invalid_argument}, {@code unavailable}, ...). Its sum over its
     * count is the mean time from the kubelet's call to the pod's files being written.
     */
    public void csiPublish(Duration took, String result) {
        Timer.builder("satoken.csi.publish")
                .description("NodePublishVolume calls by result, from the kubelet's call to the answer")
                .tag("result", result)
                .register(registry)
                .record(took);
    }

    /** Registers the gauge of published CSI volumes. */
    public void watchVolumes(java.util.function.IntSupplier published) {
        // strong: a gauge holds its object weakly, and a method reference has no other holder (NaN after a GC)
        Gauge.builder("satoken.csi.volumes", published, s -> s.getAsInt()).strongReference(true)
                .description("CSI volumes published on this node").register(registry);
    }

    /** A projection was rejected: {@code source} is {@code config} (CSI attributes count in csiPublish). */
    public void invalidProjection(String source) {
        counter("satoken.projections.invalid", "source", source).increment();
    }

    public void event(boolean created) {
        counter("satoken.events", "result", created ? "created" : "failed").increment();
    }

    public void configReload(boolean ok) {
        counter("satoken.config.reloads", "result", ok ? "success" : "failure").increment();
    }

    /**
     * Records how far ahead of the local clock the token was issued; true when that is clock skew
     * (its iat or nbf is more than {@link #SKEW_TOLERANCE} in the local future).
     */
    public boolean observeIssued(Instant issuedAt, Instant notBefore) {
        Instant now = clock.instant();
        Instant latest = notBefore != null && notBefore.isAfter(issuedAt) ? notBefore : issuedAt;
        Duration ahead = Duration.between(now, latest);
        lastSkewMillis.set(ahead.toMillis());
        if (ahead.compareTo(SKEW_TOLERANCE) > 0) {
            skewed.increment();
            return true;
        }
        return false;
    }

    @Override
    public void written(TokenDirectory dir, Projection projection, IssuedToken token, boolean rotation) {
        writesOk.increment();
        if (rotation) {
            refreshesOk.increment();
        }
    }

    @Override
    public void fetchFailed(TokenKey key, List<TokenDirectory> dirs, TokenSourceException error, boolean serving) {
        if (serving) {
            refreshesFailed.increment();
        }
    }

    @Override
    public void writeFailed(TokenDirectory dir, Exception error) {
        writesFailed.increment();
    }

    private Counter counter(String name, String tag, String value) {
        return Counter.builder(name).tag(tag, value).register(registry);
    }
}
