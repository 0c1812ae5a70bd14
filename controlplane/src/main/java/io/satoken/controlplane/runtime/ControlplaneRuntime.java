package io.satoken.controlplane.runtime;

import io.kubernetes.client.extended.leaderelection.LeaderElectionConfig;
import io.kubernetes.client.extended.leaderelection.LeaderElector;
import io.kubernetes.client.openapi.ApiClient;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import io.satoken.common.health.HealthServer;
import io.satoken.common.metrics.ProgramRegistry;
import io.satoken.controlplane.https.WebhookServer;
import io.satoken.controlplane.aggregation.AggregationController;
import io.satoken.controlplane.controller.Controller;
import io.satoken.controlplane.controller.ControllerMetrics;
import io.satoken.controlplane.kube.Informers;
import io.satoken.controlplane.jwt.LegacyTokenGenerator;
import io.satoken.controlplane.injection.InjectionCheckController;
import io.satoken.controlplane.rootca.RootCaPublisher;
import io.satoken.controlplane.serviceaccounts.ServiceAccountsController;
import io.satoken.controlplane.tokens.TokensController;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicBoolean;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The control plane process: the health and metrics server and, when asked for, the admission webhook,
 * in every replica; then, while it leads (or at once without leader election), the selected controllers.
 * Webhook and controllers share one set of informers. With no controllers selected there is nothing to
 * lead, and no Lease is taken.
 *
 * <p>Losing the Lease ends {@link #run()} with exit code 1: the controllers' state is not torn down and
 * rebuilt in place; the process exits and the Deployment restarts it as a follower, which is simple and
 * cannot leave two leaders writing.
 */
public final class ControlplaneRuntime implements AutoCloseable {

    /** What {@code run} was asked to do. */
    public record Settings(Set<String> controllers, LegacyTokenGenerator signer, byte[] rootCa,
            boolean legacyTokenAutoCreate, int concurrentSyncs, InetSocketAddress metricsAddress,
            LeaderElection leaderElection, AdmissionWebhook.Settings webhook, boolean injectionCheckEvictPods) {

        /** Settings whose injection check, if selected, evicts no pod. */
        public Settings(Set<String> controllers, LegacyTokenGenerator signer, byte[] rootCa,
                boolean legacyTokenAutoCreate, int concurrentSyncs, InetSocketAddress metricsAddress,
                LeaderElection leaderElection, AdmissionWebhook.Settings webhook) {
            this(controllers, signer, rootCa, legacyTokenAutoCreate, concurrentSyncs, metricsAddress, leaderElection,
                    webhook, false);
        }
    }

    /** {@code --leader-elect*}: the Lease and its timings; null settings mean no election. */
    public record LeaderElection(String namespace, String name, String identity, Duration leaseDuration,
            Duration renewDeadline, Duration retryPeriod) {
    }

    /** How {@link #run()} ended. */
    public static final int EXIT_STOPPED = 0;
    public static final int EXIT_LOST_LEADERSHIP = 1;

    private static final Logger log = LoggerFactory.getLogger(ControlplaneRuntime.class);

    private final Settings settings;
    private final ApiClient client;
    private final ApiClient serviceClient;
    private final PrometheusMeterRegistry registry = ProgramRegistry.create();
    private final ControllerMetrics controllerMetrics = new ControllerMetrics(registry);
    private final HealthServer health;
    private final AtomicBoolean leading = new AtomicBoolean();
    private final AtomicBoolean stopping = new AtomicBoolean();
    private final CountDownLatch stopped = new CountDownLatch(1);
    private final List<Controller> controllers = new CopyOnWriteArrayList<>();
    private final Informers informers;
    private final AdmissionWebhook webhook;
    private volatile boolean controllersStarted;
    private LeaderElector elector;

    /**
     * @param client the controllers' requests (the one {@code --kube-api-qps} limits)
     * @param watchClient the informers' lists and watches, without a read timeout
     * @param serviceClient the Lease's and the webhook's requests: kept apart so that a Lease renewal or an
     *     admission review never queues behind a controller's backlog
     */
    public ControlplaneRuntime(Settings settings, ApiClient client, ApiClient watchClient, ApiClient serviceClient) {
        this.settings = settings;
        this.client = client;
        this.serviceClient = serviceClient;
        ApiRequestMetrics.instrument(client, registry);
        ApiRequestMetrics.instrument(watchClient, registry);
        if (serviceClient != client) {
            ApiRequestMetrics.instrument(serviceClient, registry);
        }
        if (!settings.controllers().isEmpty()) {
            // a webhook-only process leads nothing: no gauge, so "no leader" counts only controller replicas
            Gauge.builder("satoken_controlplane_leader", () -> leading.get() ? 1 : 0)
                    .description("1 while this process holds the Lease and runs the controllers (at once without "
                            + "leader election), else 0; only processes with controllers selected have it")
                    .register(registry);
        }
        // every selected loop's series at 0 from the first scrape, on followers too
        for (String name : settings.controllers()) {
            (name.equals(TokensController.NAME) ? TokensController.LOOPS : List.of(name))
                    .forEach(controllerMetrics::expect);
        }
        this.informers = new Informers(watchClient);
        this.webhook = settings.webhook() == null ? null
                : new AdmissionWebhook(settings.webhook(), informers, serviceClient, registry);
        // a follower is ready: it serves metrics and takes over when the leader goes; a leader is ready once
        // its caches have synced; the webhook, once it listens and its caches have synced
        this.health = new HealthServer(settings.metricsAddress(), registry,
                List.of(new HealthServer.Check("ping", () -> true)),
                List.of(new HealthServer.Check("controllers-synced", () -> !leading.get() || controllersStarted),
                        new HealthServer.Check("webhook", () -> webhook == null || webhook.ready())));
    }

    /** Serves {@code /healthz}, {@code /readyz} and {@code /metrics}, and the webhook when it is on. */
    public void startServing() throws IOException, InterruptedException {
        health.start();
        log.info("serving /healthz, /readyz and /metrics on {}", health.address());
        if (webhook != null) {
            informers.start();
            webhook.start();
            log.info("serving the admission webhook on {} ({})", webhook.address(), String.join(", ", webhook.paths()));
        }
    }

    /**
     * Runs the controllers until {@link #close()} ({@link #EXIT_STOPPED}) or until the Lease is lost
     * ({@link #EXIT_LOST_LEADERSHIP}). Blocks.
     */
    public int run() throws InterruptedException {
        LeaderElection election = settings.leaderElection();
        if (settings.controllers().isEmpty()) {
            log.info("no controllers selected; serving only");
            stopped.await();
            return EXIT_STOPPED;
        }
        if (election == null) {
            leading.set(true);
            startControllers();
            stopped.await();
            return EXIT_STOPPED;
        }
        LeaderElectionConfig config = new LeaderElectionConfig(
                new PatchingLeaseLock(election.namespace(), election.name(), election.identity(), serviceClient),
                election.leaseDuration(), election.renewDeadline(), election.retryPeriod());
        synchronized (this) {
            if (stopping.get()) {
                return EXIT_STOPPED;
            }
            elector = new LeaderElector(config);
        }
        log.info("waiting to lead: Lease {}/{} as {}", election.namespace(), election.name(), election.identity());
        elector.run(() -> {
            leading.set(true);
            log.info("leading: Lease {}/{}", election.namespace(), election.name());
            try {
                startControllers();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }, () -> leading.set(false), leader -> log.info("the leader is {}", leader));
        if (stopping.get()) {
            return EXIT_STOPPED;
        }
        log.error("lost the Lease {}/{}; exiting so that only the new leader writes", election.namespace(),
                election.name());
        return EXIT_LOST_LEADERSHIP;
    }

    /** The webhook's bound address; null when the webhook is off. */
    public InetSocketAddress webhookAddress() {
        return webhook == null ? null : webhook.address();
    }

    /** The address the health server is bound to. */
    public InetSocketAddress healthAddress() {
        return health.address();
    }

    public PrometheusMeterRegistry registry() {
        return registry;
    }

    @Override
    public void close() {
        stopping.set(true);
        synchronized (this) {
            if (elector != null) {
                elector.close();
            }
        }
        controllers.forEach(Controller::close);
        if (webhook != null) {
            // readiness turns false at once; /readyz keeps answering until the drain is over
            try {
                webhook.drain(WebhookServer.WAIT);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            webhook.close();
        }
        informers.close();
        health.close();
        stopped.countDown();
    }

    private void startControllers() throws InterruptedException {
        Informers shared = informers;
        ControllerMetrics metrics = controllerMetrics;
        int workers = settings.concurrentSyncs();
        // every controller registers its handlers and indexers before its informers start; the webhook's may
        // run already, and a handler added to a running informer is first given everything it holds
        for (String name : settings.controllers()) {
            controllers.add(switch (name) {
                case TokensController.NAME -> new TokensController(shared, client, settings.signer(), settings.rootCa(),
                        settings.legacyTokenAutoCreate(), workers, metrics);
                case ServiceAccountsController.NAME -> new ServiceAccountsController(shared, client, workers, metrics);
                case RootCaPublisher.NAME -> new RootCaPublisher(shared, client, settings.rootCa(), workers, metrics);
                case AggregationController.NAME -> new AggregationController(shared, client, workers, metrics);
                case InjectionCheckController.NAME -> new InjectionCheckController(shared, client,
                        settings.injectionCheckEvictPods(), workers, metrics);
                default -> throw new IllegalStateException("unknown controller " + name);
            });
        }
        shared.start();
        while (!shared.synced()) {
            if (stopping.get()) {
                return;
            }
            Thread.sleep(100);
        }
        controllers.forEach(Controller::start);
        controllersStarted = true;
        log.info("caches synced; running controllers {}", settings.controllers());
    }
}
