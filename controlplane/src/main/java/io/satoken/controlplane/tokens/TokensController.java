package io.satoken.controlplane.tokens;

import com.github.benmanes.caffeine.cache.Ticker;
import io.kubernetes.client.informer.cache.Lister;
import io.kubernetes.client.openapi.ApiClient;
import io.kubernetes.client.openapi.models.V1Secret;
import io.kubernetes.client.openapi.models.V1ServiceAccount;
import io.satoken.controlplane.controller.ControllerLoop;
import io.satoken.controlplane.controller.ControllerMetrics;
import io.satoken.controlplane.controller.EventHandlers;
import io.satoken.controlplane.kube.Informers;
import io.satoken.controlplane.controller.LoopController;
import io.satoken.controlplane.jwt.LegacyTokenGenerator;
import java.security.SecureRandom;
import java.util.List;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The legacy tokens controller ({@code tokens}, spec 4a): fills token Secrets, deletes those whose
 * ServiceAccount is gone, unlinks deleted ones from their account, and with {@code autoCreate} gives every
 * account a token Secret as v1.17 did. Two queues, one per kind, each key retried at most
 * {@value #MAX_RETRIES} times (TC-2).
 */
public final class TokensController extends LoopController {

    public static final String NAME = "tokens";
    /** Its two work queues, each a loop with its own {@code controller} label in the metrics. */
    public static final List<String> LOOPS = List.of(NAME + "-serviceaccounts", NAME + "-secrets");
    static final int MAX_RETRIES = 10;

    private static final Logger log = LoggerFactory.getLogger(TokensController.class);

    private final ControllerLoop<ServiceAccountKey> serviceAccountLoop;
    private final ControllerLoop<SecretKey> secretLoop;

    /**
     * @param rootCa the bundle for {@code ca.crt}; empty for none
     * @param autoCreate {@code --legacy-token-auto-create}: v1.17's token Secret for every ServiceAccount
     */
    public TokensController(Informers informers, ApiClient client, LegacyTokenGenerator generator, byte[] rootCa,
            boolean autoCreate, int workers, ControllerMetrics metrics) {
        super(NAME);
        SecretMutationCache secrets = new SecretMutationCache(informers.tokenSecrets().getIndexer(), Ticker.systemTicker());
        TokensApi api = new KubeTokensApi(client);
        SecureRandom random = new SecureRandom();
        TokenSecretCreation creation = autoCreate ? new TokenSecretCreation(secrets, api, generator, rootCa,
                ConflictRetry.defaultRetry(), random::nextInt) : null;
        TokenSync sync = new TokenSync(new Lister<>(informers.serviceAccounts().getIndexer()), secrets, api, generator,
                rootCa, creation, ConflictRetry.removeReference());
        this.serviceAccountLoop = addLoop(LOOPS.get(0), sync::syncServiceAccount, workers, MAX_RETRIES, metrics);
        this.secretLoop = addLoop(LOOPS.get(1), sync::syncSecret, workers, MAX_RETRIES, metrics);
        informers.serviceAccounts().addEventHandler(EventHandlers.of(this::queue, this::queue));
        informers.tokenSecrets().addEventHandler(EventHandlers.of(this::queue, secret -> {
            secrets.deleted(secret.getMetadata().getNamespace(), secret.getMetadata().getName());
            queue(secret);
        }));
    }

    private void queue(V1ServiceAccount sa) {
        ServiceAccountKey.of(sa).ifPresentOrElse(serviceAccountLoop::enqueue,
                () -> log.error("ignoring a serviceaccount event without namespace, name or uid: {}", sa.getMetadata()));
    }

    private void queue(V1Secret secret) {
        SecretKey.of(secret).ifPresentOrElse(secretLoop::enqueue,
                () -> log.error("ignoring token secret {}/{}: namespace, name, uid or the {} annotation is empty",
                        secret.getMetadata() == null ? "" : secret.getMetadata().getNamespace(),
                        secret.getMetadata() == null ? "" : secret.getMetadata().getName(),
                        SecretKey.SA_NAME_ANNOTATION));
    }
}
