package io.satoken.agent.metrics;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.Timer;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import io.prometheus.metrics.model.registry.Collector;
import io.prometheus.metrics.model.snapshots.GaugeSnapshot;
import io.prometheus.metrics.model.snapshots.MetricSnapshot;
import io.prometheus.metrics.model.snapshots.Unit;
import io.satoken.agent.projection.Projection;
import io.satoken.agent.projection.TokenDirectory;
import io.satoken.agent.refresh.RefreshListener;
import io.satoken.agent.refresh.RefreshScheduler;
import io.satoken.agent.token.IssuedToken;
import io.satoken.agent.token.TokenCache;
import io.satoken.agent.token.TokenKey;
import io.satoken.agent.token.TokenSource;
import io.satoken.agent.token.TokenSourceException;
import io.satoken.common.metrics.ProgramRegistry;
import java.time.Duration;
import java.time.Instant;
import java.time.InstantSource;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.IntSupplier;

/**
 * The agent's Prometheus metrics. Their names, labels and meaning are listed once, in docs/operations.md ("Metrics
 * and alerts"), which {@code AgentScrapeConventionsTest} reads as its contract: every family there is served with its
 * label values, and nothing is served that is not there.
 *
 * <p>Every documented label value is registered at 0 when its metric is, so a rate or an alert over it has a
 * series from the first scrape. The soonest-expiry gauge has no honest value while no token is held, and is
 * then left out (neither NaN nor a 0 that would read as "expiring now").
 */
public final class AgentMetrics implements RefreshListener {

    /** iat and nbf are whole seconds: a server up to a second ahead is rounding, not skew. */
    public static final Duration SKEW_TOLERANCE = Duration.ofSeconds(1);

    /** How a NodePublishVolume can end: success, or the gRPC codes the agent answers with. */
    public static final List<String> CSI_RESULTS = List.of("success", "invalid_argument", "already_exists",
            "not_found", "failed_precondition", "aborted", "unavailable", "internal");

    public static final String SOONEST_EXPIRY = "satoken_token_soonest_expiry_seconds";

    /** TokenRequest latency: a healthy API server answers in milliseconds; the client times out at 10 s. */
    private static final Duration[] REQUEST_BUCKETS = durations(0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10);
    /** NodePublishVolume: a cached token is written in milliseconds; a new one waits up to 90 s for the API. */
    private static final Duration[] PUBLISH_BUCKETS = durations(0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60);

    private final PrometheusMeterRegistry registry;
    private final InstantSource clock;
    private final Timer requestDuration;
    private final Map<String, Counter> requests = new ConcurrentHashMap<>();
    private final Map<String, Timer> publishes = new ConcurrentHashMap<>();
    private final Counter writesOk;
    private final Counter writesFailed;
    private final Counter refreshesOk;
    private final Counter refreshesFailed;
    private final Counter invalidConfigs;
    private final Counter eventsCreated;
    private final Counter eventsFailed;
    private final Counter reloadsOk;
    private final Counter reloadsFailed;
    private final Counter skewed;
    private final AtomicLong lastSkewMillis = new AtomicLong();

    public AgentMetrics(InstantSource clock) {
        this(ProgramRegistry.create(), clock);
    }

    /** @param registry where the agent's meters go; {@link ProgramRegistry#create()} adds the JVM and process ones */
    public AgentMetrics(PrometheusMeterRegistry registry, InstantSource clock) {
        this.registry = registry;
        this.clock = clock;
        this.requestDuration = Timer.builder("satoken.token.request.duration")
                .description("TokenRequest latency, from the call to the API server's answer or the failure")
                .serviceLevelObjectives(REQUEST_BUCKETS)
                .publishPercentileHistogram(false)
                .register(registry);
        for (String result : List.of("success", "retryable", "refused")) {
            requests.put(result, counter("satoken.token.requests", "TokenRequest calls by result: success, "
                    + "retryable (5xx, 429, network; retried with backoff) or refused (4xx; not retried)", result));
        }
        String writes = "Token files (re)written by result";
        this.writesOk = counter("satoken.file.writes", writes, "success");
        this.writesFailed = counter("satoken.file.writes", writes, "failure");
        String refreshes = "Refreshes of a token that was already being served, by result; a failure keeps "
                + "serving the still-valid token";
        this.refreshesOk = counter("satoken.token.refreshes", refreshes, "success");
        this.refreshesFailed = counter("satoken.token.refreshes", refreshes, "failure");
        this.invalidConfigs = Counter.builder("satoken.projections.invalid")
                .description("Projections rejected as invalid, by source (config: the static config file; CSI "
                        + "attributes count in satoken_csi_publish_seconds as invalid_argument)")
                .tag("source", "config").register(registry);
        String events = "Kubernetes Events sent about pods' token volumes, by result";
        this.eventsCreated = counter("satoken.events", events, "created");
        this.eventsFailed = counter("satoken.events", events, "failed");
        String reloads = "Reloads of the static config file after it changed, by result; a failure keeps the "
                + "previous config";
        this.reloadsOk = counter("satoken.config.reloads", reloads, "success");
        this.reloadsFailed = counter("satoken.config.reloads", reloads, "failure");
        this.skewed = Counter.builder("satoken.token.clock.skew")
                .description("Tokens whose iat or nbf lies more than 1 s in the local clock's future").register(registry);
        Gauge.builder("satoken.token.clock.skew.seconds", lastSkewMillis, ms -> ms.get() / 1000.0)
                .description("The last issued token's iat (or nbf, if later) minus the local time, in seconds; "
                        + "0 before the first token")
                .register(registry);
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
                requests.get(result).increment();
            }
        };
    }

    /** Registers the gauges and counters read from the cache and scheduler. */
    public void watch(TokenCache cache, RefreshScheduler scheduler) {
        String lookups = "Token lookups by result: hit (served from the cache) or miss (a TokenRequest)";
        FunctionCounter.builder("satoken.token.cache", cache, TokenCache::hits).tag("result", "hit")
                .description(lookups).register(registry);
        FunctionCounter.builder("satoken.token.cache", cache, TokenCache::misses).tag("result", "miss")
                .description(lookups).register(registry);
        registry.getPrometheusRegistry().register(new SoonestExpiry(scheduler, clock));
        for (RefreshScheduler.State state : RefreshScheduler.State.values()) {
            Gauge.builder("satoken.projections", scheduler, s -> s.projectionStates().get(state))
                    .tag("state", state.name().toLowerCase(Locale.ROOT))
                    .description("Token files by state: pending (no token yet), ready, refresh_failing (served, "
                            + "refresh failing) or failed (no token could be fetched)")
                    .register(registry);
        }
    }

    /**
     * Registers the CSI meters (CSI mode): the published volumes gauge, and the NodePublishVolume histogram with
     * every result in {@link #CSI_RESULTS} at 0.
     */
    public void watchVolumes(IntSupplier published) {
        // strong: a gauge holds its object weakly, and a method reference has no other holder (NaN after a GC)
        Gauge.builder("satoken.csi.volumes", published, s -> s.getAsInt()).strongReference(true)
                .description("CSI volumes published on this node").register(registry);
        CSI_RESULTS.forEach(this::publishTimer);
    }

    /**
     * A NodePublishVolume was answered after {@code took}: {@code result} is {@code success}, or the gRPC
     * status code in lower case ({@code invalid_argument}, {@code unavailable}, ...). Its sum over its
     * count is the mean time from the kubelet's call to the pod's files being written.
     */
    public void csiPublish(Duration took, String result) {
        publishTimer(result).record(took);
    }

    private Timer publishTimer(String result) {
        return publishes.computeIfAbsent(result, r -> Timer.builder("satoken.csi.publish")
                .description("NodePublishVolume calls by result (success or the gRPC code), from the kubelet's call "
                        + "to the answer")
                .tag("result", r)
                .serviceLevelObjectives(PUBLISH_BUCKETS)
                .publishPercentileHistogram(false)
                .register(registry));
    }

    /** A projection was rejected: the static config (CSI attributes count in csiPublish). */
    public void invalidProjection(String source) {
        if (!source.equals("config")) {
            throw new IllegalArgumentException("unknown source " + source);
        }
        invalidConfigs.increment();
    }

    public void event(boolean created) {
        (created ? eventsCreated : eventsFailed).increment();
    }

    public void configReload(boolean ok) {
        (ok ? reloadsOk : reloadsFailed).increment();
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

    private Counter counter(String name, String help, String result) {
        return Counter.builder(name).description(help).tag("result", result).register(registry);
    }

    private static Duration[] durations(double... seconds) {
        Duration[] out = new Duration[seconds.length];
        for (int i = 0; i < seconds.length; i++) {
            out[i] = Duration.ofNanos(Math.round(seconds[i] * 1e9));
        }
        return out;
    }

    /**
     * {@value #SOONEST_EXPIRY}: a collector of the registry's own model rather than a Micrometer gauge, since a
     * gauge must always answer and this one has nothing to say while no token is held.
     */
    private record SoonestExpiry(RefreshScheduler scheduler, InstantSource clock) implements Collector {
        @Override
        public MetricSnapshot collect() {
            GaugeSnapshot.Builder gauge = GaugeSnapshot.builder()
                    .name(SOONEST_EXPIRY)
                    .help("Seconds until the soonest-expiring token held for a file expires (negative once it has "
                            + "expired); absent while no token is held")
                    .unit(Unit.SECONDS);
            scheduler.soonestExpiry().ifPresent(exp -> gauge.dataPoint(GaugeSnapshot.GaugeDataPointSnapshot.builder()
                    .value(Duration.between(clock.instant(), exp).toMillis() / 1000.0).build()));
            return gauge.build();
        }

        @Override
        public String getPrometheusName() {
            return SOONEST_EXPIRY;
        }
    }
}
