package io.satoken.controlplane.runtime;

import io.kubernetes.client.informer.SharedIndexInformer;
import io.kubernetes.client.openapi.ApiClient;
import io.kubernetes.client.openapi.apis.CoreV1Api;
import io.kubernetes.client.openapi.models.V1ServiceAccount;
import io.micrometer.core.instrument.MeterRegistry;
import io.satoken.controlplane.admission.Admission;
import io.satoken.controlplane.admission.AgentTokenInjection;
import io.satoken.controlplane.admission.ApiAudiences;
import io.satoken.controlplane.admission.NodeTokenRestriction;
import io.satoken.controlplane.admission.PodFactsLookup;
import io.satoken.controlplane.admission.PodMutation;
import io.satoken.controlplane.admission.ServiceAccountAdmission;
import io.satoken.controlplane.admission.ServiceAccountLookup;
import io.satoken.controlplane.admission.VolumeNameSuffix;
import io.satoken.controlplane.https.ServingCertificate;
import io.satoken.controlplane.https.WebhookMetrics;
import io.satoken.controlplane.https.WebhookServer;
import io.satoken.controlplane.kube.Informers;
import io.satoken.controlplane.webhook.AdmissionEndpoint;
import io.satoken.controlplane.webhook.AgentAccountCheck;
import java.net.InetSocketAddress;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The admission webhook as the control plane runs it, assembled: the server, the paths {@code --webhooks} selects
 * (any other answers 404), the informer caches they read, and the poll that reloads the serving
 * certificate. It runs in every replica, leader or not, so the webhook Service can spread the API
 * server's calls. Its flags are checked by {@code cli.WebhookOptions}.
 */
public final class AdmissionWebhook implements AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(AdmissionWebhook.class);

    public static final String MUTATE_PODS = "/mutate/pods";
    public static final String VALIDATE_TOKEN_REQUESTS = "/validate/serviceaccount-token";
    /**
     * The agent's token volume alone, for clusters that keep kube-apiserver's ServiceAccount admission plugin
     * (deploy/profiles/injection-only): no ServiceAccount is read, so no cache of them is kept either.
     */
    public static final String MUTATE_POD_AGENT_TOKENS = "/mutate/pods/agent-tokens";
    /** How often the certificate files are checked for changes. */
    static final Duration CERTIFICATE_POLL = Duration.ofSeconds(10);
    /** How often the check of --agent-service-account runs: at once, then this often for as long as it serves. */
    static final Duration AGENT_CHECK_PERIOD = Duration.ofSeconds(15);

    /** {@code --webhooks} names, each with the path it serves. */
    public static final Map<String, String> WEBHOOKS = Map.of("pods", MUTATE_PODS,
            "serviceaccount-token", VALIDATE_TOKEN_REQUESTS, "agent-tokens", MUTATE_POD_AGENT_TOKENS);
    /** {@code --webhooks} when not given: the paths controlplane/deploy/webhooks registers. */
    public static final String ALL_WEBHOOKS = "pods,serviceaccount-token";

    /**
     * The webhook's settings, from its flags (checked by {@code cli.WebhookOptions}).
     *
     * @param webhooks the {@link #WEBHOOKS} names to serve; the other paths answer 404
     * @param apiAudiences the API server's own audiences (NT-6), or null to read them from the webhook's
     *     in-cluster token
     * @param drainDelay how long a stopping webhook goes on answering once it is no longer ready
     *     ({@link WebhookServer#drain})
     * @param reusePort bind with {@code SO_REUSEPORT} ({@link WebhookServer})
     * @throws IllegalArgumentException when serviceaccount-token is served without an agent ServiceAccount: the
     *     webhook never fails open, whoever builds the settings
     */
    public record Settings(InetSocketAddress address, ServingCertificate certificate, boolean limitSecretReferences,
            String agentServiceAccount, WebhookServer.Limits limits, Set<String> webhooks, List<String> apiAudiences,
            Duration drainDelay, boolean reusePort) {

        public Settings {
            if (drainDelay.isNegative()) {
                throw new IllegalArgumentException("--webhook-drain-delay must not be negative, got " + drainDelay);
            }
            webhooks = Set.copyOf(webhooks);
            apiAudiences = apiAudiences == null ? null : List.copyOf(apiAudiences);
            if (webhooks.contains("serviceaccount-token") && agentServiceAccount == null) {
                throw new IllegalArgumentException("the serviceaccount-token webhook needs the node agents' "
                        + "ServiceAccount (--agent-service-account), whose token requests it confines");
            }
        }

        /** No drain delay (an embedded webhook, as the tests run it), without {@code SO_REUSEPORT}. */
        public Settings(InetSocketAddress address, ServingCertificate certificate, boolean limitSecretReferences,
                String agentServiceAccount, WebhookServer.Limits limits, Set<String> webhooks,
                List<String> apiAudiences) {
            this(address, certificate, limitSecretReferences, agentServiceAccount, limits, webhooks, apiAudiences,
                    Duration.ZERO, false);
        }

        /** Every path, audiences from the in-cluster token. */
        public Settings(InetSocketAddress address, ServingCertificate certificate, boolean limitSecretReferences,
                String agentServiceAccount, WebhookServer.Limits limits) {
            this(address, certificate, limitSecretReferences, agentServiceAccount, limits,
                    WEBHOOKS.keySet(), null);
        }
    }

    private final Settings settings;
    private final List<SharedIndexInformer<?>> caches = new ArrayList<>();
    private final WebhookServer server;
    private final WebhookMetrics metrics;
    /** The start-up check of --agent-service-account; null when serviceaccount-token is not served. */
    private final AgentAccountCheck agentCheck;
    private ScheduledExecutorService poll;
    /** The paths served, for the log. */
    private final Set<String> paths;

    /**
     * Asks {@code informers} for the caches it reads; start them after constructing this.
     *
     * @throws IllegalArgumentException when {@code --agent-service-account} is not NAMESPACE/NAME
     */
    public AdmissionWebhook(Settings settings, Informers informers, ApiClient client, MeterRegistry registry) {
        this.settings = settings;
        Map<String, Admission> paths = new HashMap<>();
        if (settings.webhooks().contains("pods")) {
            paths.put(MUTATE_PODS, podMutation(settings, informers, client));
        }
        if (settings.webhooks().contains("agent-tokens")) {
            paths.put(MUTATE_POD_AGENT_TOKENS, PodMutation.agentTokensOnly(new AgentTokenInjection()));
        }
        AgentAccountCheck check = null;
        if (settings.webhooks().contains("serviceaccount-token")) {
            check = new AgentAccountCheck(NodeTokenRestriction.AgentAccount.parse("--agent-service-account",
                    settings.agentServiceAccount()), AgentAccountCheck.live(client), registry);
            ApiAudiences audiences = settings.apiAudiences() == null
                    ? ApiAudiences.fromToken(ApiAudiences.IN_CLUSTER_TOKEN) : ApiAudiences.of(settings.apiAudiences());
            paths.put(VALIDATE_TOKEN_REQUESTS, new NodeTokenRestriction(
                    NodeTokenRestriction.AgentAccount.parse("--agent-service-account", settings.agentServiceAccount()),
                    new PodFactsLookup(PodFactsLookup.live(client)), audiences));
        }
        this.agentCheck = check;
        this.paths = new TreeSet<>(paths.keySet());
        this.metrics = new WebhookMetrics(registry, settings.certificate());
        this.server = new WebhookServer(settings.address(), settings.certificate(), new AdmissionEndpoint(paths),
                settings.limits(), metrics, settings.reusePort());
    }

    /** {@code /mutate/pods}, and the informer caches it reads. */
    private Admission podMutation(Settings settings, Informers informers, ApiClient client) {
        SharedIndexInformer<V1ServiceAccount> accounts = informers.serviceAccounts();
        caches.add(accounts);
        CoreV1Api core = new CoreV1Api(client);
        ServiceAccountLookup lookup = new ServiceAccountLookup(
                (namespace, name) -> Optional.ofNullable(accounts.getIndexer().getByKey(namespace + "/" + name)),
                (namespace, name) -> core.readNamespacedServiceAccount(name, namespace).execute());
        ServiceAccountAdmission serviceAccounts = new ServiceAccountAdmission(lookup, settings.limitSecretReferences(),
                new VolumeNameSuffix(new SecureRandom()));
        return new PodMutation(serviceAccounts, new AgentTokenInjection());
    }

    /** Binds the port and starts watching the certificate files. */
    public void start() throws InterruptedException {
        server.start();
        if (!settings.certificate().requiresClientCertificates()) {
            log.warn("the admission webhook on {} accepts reviews from any client that reaches it: no --client-ca-file; "
                    + "only a NetworkPolicy keeps others out (README, \"Client certificates\")", server.address());
        }
        poll = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread thread = new Thread(r, "satoken-webhook-certificate");
            thread.setDaemon(true);
            return thread;
        });
        poll.scheduleWithFixedDelay(() -> {
            if (settings.certificate().reload()) {
                metrics.reloaded();
            }
        }, CERTIFICATE_POLL.toMillis(), CERTIFICATE_POLL.toMillis(), TimeUnit.MILLISECONDS);
        if (agentCheck != null) {
            // at once, then for as long as it serves: a confirmed account can still be changed under it
            poll.scheduleWithFixedDelay(agentCheck::run, 0, AGENT_CHECK_PERIOD.toMillis(), TimeUnit.MILLISECONDS);
        }
    }

    /**
     * Ready once the port is bound, every cache it reads has listed and the agent's account checked
     * ({@link AgentAccountCheck}: never while it confines another account than the agent's DaemonSet runs as).
     */
    public boolean ready() {
        return server.serving() && caches.stream().allMatch(SharedIndexInformer::hasSynced)
                && (agentCheck == null || agentCheck.allowsReady());
    }

    /** The paths it serves ({@code --webhooks}), sorted. */
    public Set<String> paths() {
        return Collections.unmodifiableSet(paths);
    }

    public InetSocketAddress address() {
        return server.address();
    }

    /**
     * Stops serving without failing a review ({@link WebhookServer#drain}): not ready at once, answering for the
     * drain delay, then the reviews in progress, for at most the review deadline and two seconds (an answer
     * that has been decided is written by then).
     */
    public void drain(WebhookServer.Pause pause) throws InterruptedException {
        server.drain(settings.drainDelay(), settings.limits().reviewTimeout().plusSeconds(2), pause);
    }

    @Override
    public void close() {
        if (poll != null) {
            poll.shutdownNow();
        }
        server.close();
    }
}
