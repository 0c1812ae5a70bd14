package io.satoken.controlplane.admission;

import io.kubernetes.client.informer.SharedIndexInformer;
import io.kubernetes.client.openapi.ApiClient;
import io.kubernetes.client.openapi.apis.CoreV1Api;
import io.kubernetes.client.openapi.models.V1ObjectReference;
import io.kubernetes.client.openapi.models.V1Secret;
import io.kubernetes.client.openapi.models.V1ServiceAccount;
import io.micrometer.core.instrument.MeterRegistry;
import io.satoken.controlplane.controller.Informers;
import io.satoken.controlplane.tokens.TokenSecretOwner;
import java.net.InetSocketAddress;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

/**
 * The admission webhook as the control plane runs it: the server, its two paths, the informer caches it
 * reads, and the poll that reloads the serving certificate. It runs in every replica, leader or not, so
 * the webhook Service can spread the API server's calls.
 */
public final class AdmissionWebhook implements AutoCloseable {

    public static final String MUTATE_PODS = "/mutate/pods";
    public static final String VALIDATE_TOKEN_REQUESTS = "/validate/serviceaccount-token";
    /** How often the certificate files are checked for changes. */
    static final Duration CERTIFICATE_POLL = Duration.ofSeconds(10);

    /** The webhook's flags. */
    public record Settings(InetSocketAddress address, ServingCertificate certificate,
            ServiceAccountAdmission.TokenVolume tokenVolume, boolean limitSecretReferences,
            String agentServiceAccount, WebhookServer.Limits limits) {
    }

    private final Settings settings;
    private final List<SharedIndexInformer<?>> caches = new ArrayList<>();
    private final WebhookServer server;
    private final WebhookMetrics metrics;
    private ScheduledExecutorService poll;

    /**
     * Asks {@code informers} for the caches it reads; start them after constructing this.
     *
     * @throws IllegalArgumentException when {@code --agent-service-account} is not NAMESPACE/NAME
     */
    public AdmissionWebhook(Settings settings, Informers informers, ApiClient client, MeterRegistry registry) {
        this.settings = settings;
        NodeTokenRestriction.AgentAccount agent = settings.agentServiceAccount() == null ? null
                : NodeTokenRestriction.AgentAccount.parse("--agent-service-account", settings.agentServiceAccount());
        SharedIndexInformer<V1ServiceAccount> accounts = informers.serviceAccounts();
        caches.add(accounts);
        CoreV1Api core = new CoreV1Api(client);
        ServiceAccountLookup lookup = new ServiceAccountLookup(
                (namespace, name) -> Optional.ofNullable(accounts.getIndexer().getByKey(namespace + "/" + name)),
                (namespace, name) -> core.readNamespacedServiceAccount(name, namespace).execute());
        ServiceAccountAdmission.TokenSecrets tokenSecrets = account -> Optional.empty();
        if (settings.tokenVolume() == ServiceAccountAdmission.TokenVolume.SECRET) {
            SharedIndexInformer<V1Secret> secrets = informers.tokenSecrets();
            caches.add(secrets);
            tokenSecrets = account -> firstReferencedToken(secrets, account);
        }
        ServiceAccountAdmission serviceAccounts = new ServiceAccountAdmission(lookup, settings.tokenVolume(),
                tokenSecrets, settings.limitSecretReferences(), new VolumeNameSuffix(new SecureRandom()));
        PodMutation pods = new PodMutation(serviceAccounts, new AgentTokenInjection());
        NodeTokenRestriction tokens = new NodeTokenRestriction(agent,
                new PodFactsLookup(PodFactsLookup.live(client)));
        this.metrics = new WebhookMetrics(registry, settings.certificate());
        this.server = new WebhookServer(settings.address(), settings.certificate(),
                Map.of(MUTATE_PODS, pods, VALIDATE_TOKEN_REQUESTS, tokens), settings.limits(), metrics);
    }

    /**
     * Checks an {@code --agent-service-account} value.
     *
     * @throws IllegalArgumentException naming the flag and the expected form
     */
    public static void checkAgentServiceAccount(String value) {
        NodeTokenRestriction.AgentAccount.parse("--agent-service-account", value);
    }

    /** Binds the port and starts watching the certificate files. */
    public void start() throws InterruptedException {
        server.start();
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
    }

    /** Ready once the port is bound and every cache it reads has listed. */
    public boolean ready() {
        return server.serving() && caches.stream().allMatch(SharedIndexInformer::hasSynced);
    }

    public InetSocketAddress address() {
        return server.address();
    }

    @Override
    public void close() {
        if (poll != null) {
            poll.shutdownNow();
        }
        server.close();
    }

    /** AD-11: the account's references in order; the first that is a token Secret of this account. */
    private static Optional<String> firstReferencedToken(SharedIndexInformer<V1Secret> secrets,
            V1ServiceAccount account) {
        String namespace = account.getMetadata().getNamespace();
        for (V1ObjectReference ref : Objects.requireNonNullElse(account.getSecrets(), List.<V1ObjectReference>of())) {
            V1Secret secret = ref.getName() == null ? null : secrets.getIndexer().getByKey(namespace + "/" + ref.getName());
            if (secret != null && TokenSecretOwner.belongsTo(secret, account.getMetadata().getName(),
                    account.getMetadata().getUid())) {
                return Optional.of(ref.getName());
            }
        }
        return Optional.empty();
    }
}
