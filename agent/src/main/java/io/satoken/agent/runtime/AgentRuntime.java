package io.satoken.agent.runtime;

import io.kubernetes.client.openapi.ApiClient;
import io.satoken.agent.metrics.AgentMetrics;
import io.satoken.agent.pods.KubeEventRecorder;
import io.satoken.agent.pods.PodTokens;
import io.satoken.agent.pods.PodWatcher;
import io.satoken.agent.projection.AgentConfig;
import io.satoken.agent.projection.Projection;
import io.satoken.agent.projection.TokenDirectory;
import io.satoken.agent.refresh.Backoff;
import io.satoken.agent.refresh.ExecutorTaskScheduler;
import io.satoken.agent.refresh.RefreshListener;
import io.satoken.agent.refresh.RefreshScheduler;
import io.satoken.agent.statics.ConfigWatcher;
import io.satoken.agent.statics.StaticTokens;
import io.satoken.agent.token.IssuedToken;
import io.satoken.agent.token.RefreshPolicy;
import io.satoken.agent.token.TokenAdoption;
import io.satoken.agent.token.TokenCache;
import io.satoken.agent.token.TokenInfo;
import io.satoken.agent.token.TokenKey;
import io.satoken.agent.token.TokenSource;
import io.satoken.agent.token.TokenSourceException;
import io.satoken.agent.write.Directories;
import io.satoken.common.health.HealthServer;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.InstantSource;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Random;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The running agent, assembled from its parts: token source → cache → refresh scheduler → writer, fed
 * by the pod watcher (pod mode) and the config file (static mode), observed through the health server.
 * Nothing starts in the constructor; {@link #start()} starts it and {@link #close()} stops it.
 */
public final class AgentRuntime implements AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(AgentRuntime.class);
    /** Failed requests back off from 1 s, doubling up to a minute; refusals (403/404/422) wait the minute. */
    static final Duration BACKOFF_INITIAL = Duration.ofSeconds(1);
    static final Duration BACKOFF_MAX = Duration.ofMinutes(1);
    static final int REFRESH_THREADS = 4;

    /** What the agent needs from outside; tests pass their own. */
    public record Settings(
            AgentConfig config,
            Path configFile,
            byte[] configBytes,
            String nodeName,
            InetSocketAddress metricsAddress,
            Optional<List<String>> defaultAudiences) {}

    private final Settings settings;
    private final InstantSource clock = InstantSource.system();
    private final AgentMetrics metrics = new AgentMetrics(clock);
    private final ExecutorTaskScheduler timers = new ExecutorTaskScheduler(clock, REFRESH_THREADS);
    private final TokenCache cache;
    private final RefreshScheduler scheduler;
    private final TokenAdoption adoption;
    private final HealthServer health;
    private final List<AutoCloseable> closeLast = new ArrayList<>();
    private final ApiClient watchClient;
    private volatile PodTokens pods;
    private PodWatcher watcher;
    private StaticTokens statics;
    private ConfigWatcher configWatcher;

    /**
     * @param source issues tokens (TokenRequest against the cluster)
     * @param watchClient a client without read timeout for the pod watch, and for Events; null in static mode
     */
    public AgentRuntime(Settings settings, TokenSource source, ApiClient watchClient) {
        this.settings = settings;
        this.watchClient = watchClient;
        this.cache = new TokenCache(metrics.metered(source), RefreshPolicy.spread(), clock);
        this.scheduler = new RefreshScheduler(cache, timers, new Backoff(BACKOFF_INITIAL, BACKOFF_MAX, new Random()),
                clock, RefreshListener.all(metrics, new ToPods(), new SkewCheck()));
        this.adoption = new TokenAdoption(cache, settings.defaultAudiences());
        metrics.watch(cache, scheduler);
        List<HealthServer.Check> readiness = new ArrayList<>();
        if (settings.config().mode().pods()) {
            readiness.add(new HealthServer.Check("pods-synced", () -> watcher != null && watcher.ready()));
        }
        if (settings.config().mode().statics()) {
            readiness.add(new HealthServer.Check("static-written", () -> statics != null && statics.allWritten()));
        }
        this.health = new HealthServer(settings.metricsAddress(), metrics.registry(),
                List.of(new HealthServer.Check("ping", () -> true)), readiness);
    }

    /** Starts serving health and metrics, then the configured sources of projections. */
    public void start() throws IOException {
        health.start();
        log.info("serving /healthz, /readyz and /metrics on {}", health.address());
        AgentConfig config = settings.config();
        if (config.mode().pods()) {
            Directories.create(config.podsDir());
            KubeEventRecorder events = new KubeEventRecorder(watchClient, settings.nodeName(), clock, metrics);
            closeLast.add(events);
            pods = new PodTokens(config.rootDir(), scheduler, cache, adoption, events, metrics);
            watcher = new PodWatcher(watchClient, settings.nodeName(), pods);
            watcher.start();
            log.info("pod mode: watching pods on node {}, writing under {}", settings.nodeName(), config.podsDir());
        }
        if (config.mode().statics()) {
            statics = new StaticTokens(scheduler, adoption, clock);
            statics.apply(config.staticDirectories());
            configWatcher = new ConfigWatcher(settings.configFile(), config, settings.configBytes(), timers, clock,
                    ConfigWatcher.DEFAULT_PERIOD, next -> statics.apply(next.staticDirectories()), metrics);
            configWatcher.start();
            log.info("static mode: {} projection(s) from {}", config.projections().size(), settings.configFile());
        }
    }

    /** The address the health server is bound to. */
    public InetSocketAddress healthAddress() {
        return health.address();
    }

    public AgentMetrics metrics() {
        return metrics;
    }

    /** Stops watching and refreshing; token files stay on disk for the next start to adopt. */
    @Override
    public void close() {
        if (configWatcher != null) {
            configWatcher.close();
        }
        if (watcher != null) {
            watcher.close();
        }
        scheduler.close();
        timers.close();
        for (AutoCloseable c : closeLast) {
            try {
                c.close();
            } catch (Exception e) {
                log.warn("closing {} failed: {}", c, e.toString());
            }
        }
        health.close();
    }

    /** Reads the API server's default audiences from an in-cluster ServiceAccount token, if there is one. */
    public static Optional<List<String>> defaultAudiences(Path serviceAccountToken) {
        try {
            if (Files.isReadable(serviceAccountToken)) {
                List<String> aud = TokenInfo.parse(Files.readString(serviceAccountToken)).audiences();
                return aud.isEmpty() ? Optional.empty() : Optional.of(aud);
            }
        } catch (IOException | IllegalArgumentException e) {
            log.info("cannot read default audiences from {}: {}", serviceAccountToken, e.getMessage());
        }
        return Optional.empty();
    }

    /** The scheduler is built before the pods that use it; this hands its reports on once they exist. */
    private final class ToPods implements RefreshListener {
        @Override
        public void fetchFailed(TokenKey key, List<TokenDirectory> dirs, TokenSourceException error, boolean serving) {
            PodTokens p = pods;
            if (p != null) {
                p.fetchFailed(key, dirs, error, serving);
            }
        }
    }

    /**
     * Every written token's issue time, against the local clock: counted for all, logged when skewed, and
     * a Warning Event when the file is a pod's.
     */
    private final class SkewCheck implements RefreshListener {
        @Override
        public void written(TokenDirectory dir, Projection projection, IssuedToken token, boolean rotation) {
            TokenInfo info;
            try {
                info = TokenInfo.parse(token.token());
            } catch (IllegalArgumentException e) {
                return; // not a JWT we can read the times of; nothing to check
            }
            if (info.issuedAt() != null && metrics.observeIssued(info.issuedAt(), info.notBefore())) {
                log.warn("token for {} was issued at {}, ahead of this host's clock; check time sync",
                        dir.dir().resolve(projection.path()), info.issuedAt());
                PodTokens p = pods;
                if (p != null) {
                    p.clockSkew(dir, projection, info);
                }
            }
        }
    }
}
