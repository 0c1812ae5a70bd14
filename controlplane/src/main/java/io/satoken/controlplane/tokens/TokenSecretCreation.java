package io.satoken.controlplane.tokens;

import static io.satoken.controlplane.controller.Reconciler.Result.DONE;
import static io.satoken.controlplane.controller.Reconciler.Result.RETRY;

import io.kubernetes.client.openapi.ApiException;
import io.kubernetes.client.openapi.models.V1ObjectMeta;
import io.kubernetes.client.openapi.models.V1ObjectReference;
import io.kubernetes.client.openapi.models.V1Secret;
import io.kubernetes.client.openapi.models.V1ServiceAccount;
import io.satoken.common.kube.Failures;
import io.satoken.controlplane.kube.ApiErrors;
import io.satoken.controlplane.kube.Informers;
import io.satoken.controlplane.controller.Reconciler.Result;
import io.satoken.controlplane.jwt.LegacyTokenGenerator;
import io.satoken.controlplane.jwt.TokenGenerationException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.function.IntUnaryOperator;
import java.util.stream.Collectors;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * {@code --legacy-token-auto-create}: the v1.17 behaviour (TC-7) of giving every ServiceAccount a token
 * Secret named {@code <sa>-token-xxxxx} and listing it in the account's {@code .secrets}.
 *
 * <p>The steps, as in v1.17's {@code ensureReferencedToken}:
 * <ol>
 *   <li>An account already listing one of its token Secrets needs nothing.
 *   <li>Read the account live; if its resourceVersion differs from the cache's, one of them is stale: retry.
 *   <li>Create the Secret, already filled ({@code token}, {@code namespace}, {@code ca.crt}); remember it in
 *       the mutation cache so a second sync does not create another.
 *   <li>Append the reference to a freshly read account, retrying on conflict; stop if the account was
 *       replaced (other UID) or meanwhile lists a token of its own.
 *   <li>If no reference was added, delete the new Secret (UID precondition) so it does not linger.
 * </ol>
 */
final class TokenSecretCreation {

    /** Upstream's generated-name rules: at most 58 characters of prefix, then 5 from this alphabet. */
    static final int MAX_PREFIX = 63 - 5;
    static final String ALPHABET = "bcdfghjklmnpqrstvwxz2456789";

    private static final Logger log = LoggerFactory.getLogger(TokenSecretCreation.class);

    private final SecretMutationCache secrets;
    private final TokensApi api;
    private final LegacyTokenGenerator generator;
    private final byte[] rootCa;
    private final ConflictRetry conflictRetry;
    private final IntUnaryOperator random;

    /**
     * @param random returns a uniform int in [0, bound) for the name suffix (tests pin it)
     */
    TokenSecretCreation(SecretMutationCache secrets, TokensApi api, LegacyTokenGenerator generator, byte[] rootCa,
            ConflictRetry conflictRetry, IntUnaryOperator random) {
        this.secrets = secrets;
        this.api = api;
        this.generator = generator;
        this.rootCa = rootCa.clone();
        this.conflictRetry = conflictRetry;
        this.random = random;
    }

    Result ensureReferencedToken(V1ServiceAccount sa) throws InterruptedException {
        // 1.
        if (hasReferencedToken(sa)) {
            return DONE;
        }
        String ns = sa.getMetadata().getNamespace();
        String saName = sa.getMetadata().getName();
        // 2.
        try {
            V1ServiceAccount live = api.getServiceAccount(ns, saName);
            if (!Objects.equals(live.getMetadata().getResourceVersion(), sa.getMetadata().getResourceVersion())) {
                return RETRY;
            }
        } catch (ApiException e) {
            log.warn("reading serviceaccount {}/{}: {}", ns, saName, Failures.said(e));
            return RETRY;
        }
        // 3.
        V1Secret created;
        try {
            created = api.createSecret(newTokenSecret(sa));
        } catch (TokenGenerationException e) {
            log.error("signing a token for serviceaccount {}/{}: {}", ns, saName, e.getMessage());
            return DONE;
        } catch (ApiException e) {
            if (ApiErrors.hasCause(e, ApiErrors.NAMESPACE_TERMINATING_CAUSE)) {
                return DONE;
            }
            log.warn("creating a token secret for serviceaccount {}/{}: {}", ns, saName, Failures.said(e));
            return RETRY;
        }
        secrets.mutated(created);
        // 4.
        boolean[] added = {false};
        ApiException failure = null;
        try {
            conflictRetry.run(() -> added[0] = addReference(sa, created.getMetadata().getName()));
        } catch (ApiException e) {
            failure = e;
        }
        // 5.
        if (!added[0]) {
            try {
                api.deleteSecret(ns, created.getMetadata().getName(), created.getMetadata().getUid());
            } catch (ApiException e) {
                log.warn("deleting unreferenced token secret {}/{}: {}", ns, created.getMetadata().getName(),
                        Failures.said(e));
            }
        }
        if (failure != null) {
            if (ApiErrors.isConflict(failure) || ApiErrors.isNotFound(failure)) {
                return DONE; // an update event follows, or the account is gone
            }
            log.warn("referencing token secret {}/{}: {}", ns, created.getMetadata().getName(),
                    Failures.said(failure));
            return RETRY;
        }
        if (added[0]) {
            log.info("created token secret {}/{} for serviceaccount {}", ns, created.getMetadata().getName(), saName);
        }
        return DONE;
    }

    /** One try of step 4; true when the reference was written, false when it is no longer wanted. */
    private boolean addReference(V1ServiceAccount cached, String secretName) throws ApiException {
        V1ServiceAccount live = api.getServiceAccount(cached.getMetadata().getNamespace(), cached.getMetadata().getName());
        if (!Objects.equals(live.getMetadata().getUid(), cached.getMetadata().getUid()) || hasReferencedToken(live)) {
            return false;
        }
        api.addSecretReference(live, secretName);
        return true;
    }

    /** True when {@code .secrets} names a token Secret that belongs to this account. */
    boolean hasReferencedToken(V1ServiceAccount sa) {
        if (sa.getSecrets() == null || sa.getSecrets().isEmpty()) {
            return false;
        }
        Set<String> referenced = sa.getSecrets().stream().map(V1ObjectReference::getName).collect(Collectors.toSet());
        return secrets.inNamespace(sa.getMetadata().getNamespace()).stream()
                .filter(s -> TokenSecretOwner.belongsTo(s, sa.getMetadata().getName(), sa.getMetadata().getUid()))
                .anyMatch(s -> referenced.contains(s.getMetadata().getName()));
    }

    private V1Secret newTokenSecret(V1ServiceAccount sa) throws TokenGenerationException {
        String ns = sa.getMetadata().getNamespace();
        String name = generatedName(sa.getMetadata().getName() + "-token-");
        Map<String, byte[]> data = new HashMap<>();
        data.put(TokenSync.TOKEN_KEY,
                generator.generate(TokenSync.claims(sa, name)).getBytes(StandardCharsets.US_ASCII));
        data.put(TokenSync.NAMESPACE_KEY, ns.getBytes(StandardCharsets.UTF_8));
        if (rootCa.length > 0) {
            data.put(TokenSync.CA_KEY, rootCa.clone());
        }
        return new V1Secret()
                .metadata(new V1ObjectMeta().name(name).namespace(ns)
                        .putAnnotationsItem(SecretKey.SA_NAME_ANNOTATION, sa.getMetadata().getName())
                        .putAnnotationsItem(SecretKey.SA_UID_ANNOTATION, sa.getMetadata().getUid()))
                .type(Informers.TOKEN_SECRET_TYPE)
                .data(data);
    }

    String generatedName(String prefix) {
        StringBuilder name = new StringBuilder(prefix.length() > MAX_PREFIX ? prefix.substring(0, MAX_PREFIX) : prefix);
        for (int i = 0; i < 5; i++) {
            name.append(ALPHABET.charAt(random.applyAsInt(ALPHABET.length())));
        }
        return name.toString();
    }
}
