package io.satoken.agent.runtime;

import io.kubernetes.client.openapi.ApiClient;
import io.kubernetes.client.openapi.ApiException;
import io.kubernetes.client.openapi.apis.AdmissionregistrationV1Api;
import io.satoken.agent.config.AgentConfig;
import io.satoken.agent.csi.CsiServer;
import io.satoken.agent.csi.CsiVolumes;
import io.satoken.agent.csi.PodReader;
import io.satoken.agent.csi.PublishedVolume;
import io.satoken.agent.csi.TmpfsMounter;
import io.satoken.agent.csi.VolumeStore;
import io.satoken.agent.metrics.AgentMetrics;
import io.satoken.agent.pods.KubeEventRecorder;
import io.satoken.agent.pods.PodEvents;
import io.satoken.agent.projection.Projection;
import io.satoken.agent.projection.TokenDirectory;
import io.satoken.agent.reads.ConsumerReads;
import io.satoken.agent.refresh.Backoff;
import io.satoken.agent.refresh.ExecutorTaskScheduler;
import io.satoken.agent.refresh.RefreshListener;
import io.satoken.agent.refresh.RefreshScheduler;
import io.satoken.agent.refresh.TokenAdoption;
import io.satoken.agent.reload.ContainerProcesses;
import io.satoken.agent.reload.PidfdSignaller;
import io.satoken.agent.reload.ReloadNotifier;
import io.satoken.agent.statics.ConfigWatcher;
import io.satoken.agent.statics.StaticTokens;
import io.satoken.agent.token.DeliveredTokens;
import io.satoken.agent.token.IssuedToken;
import io.satoken.agent.token.IssuerKeys;
import io.satoken.agent.token.RefreshPolicy;
import io.satoken.agent.token.SignatureCheck;
import io.satoken.agent.token.TokenCache;
import io.satoken.agent.token.TokenInfo;
import io.satoken.agent.token.TokenSource;
import io.satoken.agent.write.AtomicWriter;
import io.satoken.common.health.HealthServer;
import io.satoken.common.kube.Failures;
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
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The running agent, assembled from its parts: token source → cache → refresh scheduler → writer, fed
 * by the kubelet's CSI calls (CSI mode) and the config file (static mode), observed through the health server.
 * Nothing starts in the constructor; {@link #start()} starts it and {@link #close()} stops it.
 */
public final class AgentRuntime implements AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(AgentRuntime.class);
    /** Failed requests back off from 1 s, doubling up to a minute; refusals (403/404/422) wait the minute. */
    static final Duration BACKOFF_INITIAL = Duration.ofSeconds(1);
    static final Duration BACKOFF_MAX = Duration.ofMinutes(1);
    static final int REFRESH_THREADS = 4;
    /** Where the node's processes are listed: a reload signal's container is found there. */
    static final Path PROC = Path.of("/proc");

    /** What the agent needs from outside; tests pass their own. */
    public record Settings(
            AgentConfig config,
            Path configFile,
            byte[] configBytes,
            String nodeName,
            InetSocketAddress metricsAddress,
            Optional<List<String>> defaultAudiences,
            String version) {}

    /** The agent's own token in a pod: its ServiceAccount, for {@link TokenConfinement}. */
    static final Path IN_CLUSTER_TOKEN = Path.of("/var/run/secrets/kubernetes.io/serviceaccount/token");
    /** How often {@link TokenConfinement} is checked again after start. */
    static final Duration CONFINEMENT_RECHECK = Duration.ofMinutes(10);

    private final Settings settings;
    private final InstantSource clock = InstantSource.system();
    private final AgentMetrics metrics = new AgentMetrics(clock);
    private final ExecutorTaskScheduler timers = new ExecutorTaskScheduler(clock, REFRESH_THREADS);
    private final TokenCache cache;
    private final RefreshScheduler scheduler;
    private TokenAdoption adoption;
    private final HealthServer health;
    private final List<AutoCloseable> closeLast = new ArrayList<>();
    private final ApiClient apiClient;
    /** The CSI volumes, resumed and served from {@link #start()}; null outside CSI mode. */
    private final CsiVolumes volumes;
    /** Their records; null outside CSI mode. */
    private final VolumeStore store;
    private CsiServer csi;
    private StaticTokens statics;
    private ConfigWatcher configWatcher;
    private final Diagnostics diagnostics;
    /** Sends volumes' reload signals; null outside CSI mode. */
    private final ReloadNotifier reloads;

    /**
     * @param source issues tokens (TokenRequest against the cluster); with {@code tokenSource: kubelet}, a
     *     {@link DeliveredTokens}, which mints nothing: its tokens are not counted as requests, and are served until
     *     they expire ({@link RefreshPolicy#untilExpiry()}) since the kubelet refreshes them
     * @param apiClient reads the API server's ServiceAccount keys at start, to check tokens found on disk
     *     before adopting them; reads pods and sends Events in CSI mode. Null only in static mode, and then no
     *     token on disk is adopted: every one is requested anew
     */
    public AgentRuntime(Settings settings, TokenSource source, ApiClient apiClient) {
        this.settings = settings;
        this.apiClient = apiClient;
        boolean kubeletMinted = settings.config().tokenSource() == AgentConfig.TokenSourceKind.KUBELET;
        if (kubeletMinted != source instanceof DeliveredTokens) {
            throw new IllegalArgumentException("source: tokenSource " + settings.config().tokenSource()
                    + " needs " + (kubeletMinted ? "" : "a source other than ") + "DeliveredTokens, got " + source);
        }
        // with tokenSource: kubelet, the source: the kubelet's tokens as publishes deliver them
        DeliveredTokens delivered = kubeletMinted ? (DeliveredTokens) source : null;
        this.cache = kubeletMinted
                ? new TokenCache(source, RefreshPolicy.untilExpiry(), clock)
                : new TokenCache(metrics.metered(source), RefreshPolicy.spread(), clock);
        boolean csiMode = settings.config().mode().csi();
        this.reloads = csiMode && apiClient != null
                ? new ReloadNotifier(PodReader.api(apiClient)::read, new PidfdSignaller(new ContainerProcesses(PROC)),
                        timers, clock, metrics.registry())
                : null;
        // the pods' Warning Events: an observer of the refresh, the reads and the clock check, each of which tells it
        // of a directory that carries its pod
        PodEvents events = null;
        if (csiMode) {
            KubeEventRecorder recorder = new KubeEventRecorder(apiClient, settings.nodeName(), clock, metrics);
            closeLast.add(recorder);
            events = new PodEvents(recorder, reloads);
        }
        this.store = csiMode
                ? new VolumeStore(CsiServer.socketPath(settings.config().kubeletDir()).getParent().resolve("volumes"))
                : null;
        this.diagnostics = new Diagnostics(settings.config(), settings.nodeName(), timers, clock, metrics.registry(),
                events, store);
        ConsumerReads reads = diagnostics.reads();
        this.scheduler = new RefreshScheduler(cache, timers, new Backoff(BACKOFF_INITIAL, BACKOFF_MAX, new Random()),
                clock, RefreshListener.all(metrics, new SkewCheck(events), reads.listener(),
                        reloads == null ? RefreshListener.NONE : reloads, events == null ? RefreshListener.NONE : events),
                dir -> new AtomicWriter(dir, clock, reads.observer()));
        this.volumes = csiMode
                ? new CsiVolumes(settings.config().podsDir(), settings.nodeName(), store, new TmpfsMounter(),
                        PodReader.api(apiClient), scheduler, reloads, delivered, clock)
                : null;
        metrics.watch(cache, scheduler);
        List<HealthServer.Check> readiness = new ArrayList<>();
        if (csiMode) {
            // registered now, so every CSI series is on /metrics (at 0) from the first scrape
            metrics.watchVolumes(volumes::size);
            readiness.add(new HealthServer.Check("csi-registered", () -> csi != null && csi.registered()));
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
        diagnostics.start();
        adoption = new TokenAdoption(cache, settings.defaultAudiences(), issuerKeys());
        if (config.mode().csi()) {
            store.create();
            List<PublishedVolume> resumed = volumes.resume(adoption);
            diagnostics.resumed(resumed);
            csi = new CsiServer(config.kubeletDir(), settings.nodeName(), settings.version(), volumes,
                    metrics::csiPublish, apiClient);
            csi.start();
            log.info("CSI mode: node {}, {} volume(s) resumed", settings.nodeName(), resumed.size());
            watchConfinement();
        }
        if (config.mode().statics()) {
            statics = new StaticTokens(scheduler, adoption, clock);
            statics.apply(config.staticDirectories());
            configWatcher = new ConfigWatcher(settings.configFile(), config, settings.configBytes(), timers, clock,
                    ConfigWatcher.DEFAULT_PERIOD, next -> statics.apply(next.staticDirectories()), metrics);
            configWatcher.start();
            log.info("static mode: {} projection(s) from {}", config.projections().size(), settings.configFile());
        }
        diagnostics.serveStatus(scheduler, reloads);
    }

    /**
     * The API server's ServiceAccount keys, read once: tokens on disk are adopted only when they verify.
     * Without them every token is requested anew, which the log says once.
     */
    private SignatureCheck issuerKeys() {
        if (apiClient == null) {
            log.warn("no API client to read the API server's ServiceAccount keys with: tokens on disk are not adopted,"
                    + " all are requested anew");
            return SignatureCheck.unavailable("no API client");
        }
        SignatureCheck keys = IssuerKeys.fetch(apiClient);
        if (keys instanceof IssuerKeys known) {
            log.info("read {} ServiceAccount key(s) from {}: still-valid tokens on disk are adopted after a signature"
                    + " check", known.size(), IssuerKeys.JWKS_PATH);
        } else if (keys instanceof SignatureCheck.Unavailable unavailable) {
            log.warn("cannot read the API server's ServiceAccount keys ({}): tokens on disk are not adopted, all are"
                    + " requested anew", unavailable.reason());
        }
        return keys;
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
        if (csi != null) {
            csi.close();
        }
        diagnostics.close();
        scheduler.close();
        timers.close();
        for (AutoCloseable c : closeLast) {
            try {
                c.close();
            } catch (Exception e) {
                log.warn("closing {} failed: {}", c, Failures.inWords(e));
            }
        }
        health.close();
    }

    /**
     * Says at start, and every {@link #CONFINEMENT_RECHECK} after, whether a webhook confines this agent's
     * TokenRequests ({@link TokenConfinement}): a warning when none does.
     */
    private void watchConfinement() {
        AgentConfig.TokenSourceKind kind = settings.config().tokenSource();
        if (kind != AgentConfig.TokenSourceKind.REQUEST) {
            TokenConfinement.byApiServer(kind == AgentConfig.TokenSourceKind.KUBELET
                    ? "the kubelet mints every volume's token under NodeRestriction; the agent requests none"
                    : "TokenRequests are made as node " + settings.nodeName() + " (constrained impersonation): the node"
                            + " authorizer and NodeRestriction allow them only for pods bound to it",
                    metrics.registry());
            return;
        }
        AdmissionregistrationV1Api admission = new AdmissionregistrationV1Api(apiClient);
        TokenConfinement confinement = new TokenConfinement(name -> {
            try {
                return Optional.of(admission.readValidatingWebhookConfiguration(name).execute());
            } catch (ApiException e) {
                if (e.getCode() == 404) {
                    return Optional.empty();
                }
                throw new IOException("HTTP " + e.getCode(), e);
            }
        }, serviceAccountUsername(IN_CLUSTER_TOKEN), metrics.registry());
        confinement.check();
        ScheduledExecutorService recheck = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "satoken-confinement");
            t.setDaemon(true);
            return t;
        });
        recheck.scheduleWithFixedDelay(confinement::check, CONFINEMENT_RECHECK.toMillis(),
                CONFINEMENT_RECHECK.toMillis(), TimeUnit.MILLISECONDS);
        closeLast.add(recheck::shutdownNow);
    }

    /** The username of the in-cluster token's ServiceAccount ({@code sub}), or null when there is none. */
    static String serviceAccountUsername(Path serviceAccountToken) {
        try {
            if (Files.isReadable(serviceAccountToken)) {
                String subject = TokenInfo.parse(Files.readString(serviceAccountToken)).subject();
                return subject != null && subject.startsWith("system:serviceaccount:") ? subject : null;
            }
        } catch (IOException | IllegalArgumentException e) {
            log.info("cannot read the agent's ServiceAccount from {}: {}", serviceAccountToken, e.getMessage());
        }
        return null;
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

    /**
     * Every written token's issue time, against the local clock: counted for all, logged when skewed, and
     * a Warning Event when the file is a pod's.
     */
    private final class SkewCheck implements RefreshListener {
        /** Null outside CSI mode. */
        private final PodEvents events;

        SkewCheck(PodEvents events) {
            this.events = events;
        }

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
                if (events != null) {
                    events.clockSkew(dir, projection, info);
                }
            }
        }
    }
}
