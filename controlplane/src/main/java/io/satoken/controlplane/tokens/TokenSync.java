package io.satoken.controlplane.tokens;

import static io.satoken.controlplane.controller.Reconciler.Result.DONE;
import static io.satoken.controlplane.controller.Reconciler.Result.RETRY;

import io.kubernetes.client.informer.cache.Lister;
import io.kubernetes.client.openapi.ApiException;
import io.kubernetes.client.openapi.models.V1ObjectReference;
import io.kubernetes.client.openapi.models.V1Secret;
import io.kubernetes.client.openapi.models.V1ServiceAccount;
import io.satoken.common.kube.Failures;
import io.satoken.controlplane.kube.ApiErrors;
import io.satoken.controlplane.kube.Informers;
import io.satoken.controlplane.controller.Reconciler.Result;
import io.satoken.controlplane.jwt.LegacyClaims;
import io.satoken.controlplane.jwt.LegacyTokenGenerator;
import io.satoken.controlplane.jwt.TokenGenerationException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The tokens controller's two sync functions (spec 4a): one for a ServiceAccount key, one for a token
 * Secret key. They read the caches, call the API through {@link TokensApi}, and say whether to retry.
 * With {@code autoCreate} the ServiceAccount sync also gives every account a referenced token Secret,
 * as v1.17 did (TC-7, {@link TokenSecretCreation}).
 */
final class TokenSync {

    static final String TOKEN_KEY = "token";
    static final String NAMESPACE_KEY = "namespace";
    static final String CA_KEY = "ca.crt";

    private static final Logger log = LoggerFactory.getLogger(TokenSync.class);

    private final Lister<V1ServiceAccount> serviceAccounts;
    private final SecretMutationCache secrets;
    private final TokensApi api;
    private final LegacyTokenGenerator generator;
    private final byte[] rootCa;
    private final TokenSecretCreation creation;
    private final ConflictRetry conflictRetry;

    /**
     * @param rootCa the CA bundle put in {@code ca.crt}; empty for none
     * @param creation the v1.17 auto-create step, or null for v1.30 behaviour
     */
    TokenSync(Lister<V1ServiceAccount> serviceAccounts, SecretMutationCache secrets, TokensApi api,
            LegacyTokenGenerator generator, byte[] rootCa, TokenSecretCreation creation, ConflictRetry conflictRetry) {
        this.serviceAccounts = serviceAccounts;
        this.secrets = secrets;
        this.api = api;
        this.generator = generator;
        this.rootCa = rootCa.clone();
        this.creation = creation;
        this.conflictRetry = conflictRetry;
    }

    /** TC-3: a live account needs nothing (v1.30) or a token (v1.17); a deleted one loses its token Secrets. */
    Result syncServiceAccount(ServiceAccountKey key) throws InterruptedException {
        V1ServiceAccount sa = cachedServiceAccount(key.namespace(), key.name(), key.uid());
        if (sa != null) {
            return creation == null ? DONE : creation.ensureReferencedToken(sa);
        }
        boolean retry = false;
        for (V1Secret secret : tokenSecretsOf(key.namespace(), key.name(), key.uid())) {
            retry |= deleteToken(secret.getMetadata().getNamespace(), secret.getMetadata().getName(),
                    secret.getMetadata().getUid()) == RETRY;
        }
        return retry ? RETRY : DONE;
    }

    /** TC-4: a deleted Secret is unlinked from its account; a live one is deleted with its account, or filled. */
    Result syncSecret(SecretKey key) throws InterruptedException {
        V1Secret secret = secrets.get(key.namespace(), key.name());
        if (secret == null || !key.uid().equals(secret.getMetadata().getUid())) {
            if (cachedServiceAccount(key.namespace(), key.serviceAccountName(), key.serviceAccountUid()) != null) {
                try {
                    conflictRetry.run(() -> removeSecretReference(key));
                } catch (ApiException e) {
                    log.warn("removing the reference to {} from its serviceaccount: {}", key, Failures.said(e));
                }
            }
            return DONE;
        }
        V1ServiceAccount sa;
        try {
            sa = serviceAccount(key.namespace(), key.serviceAccountName(), key.serviceAccountUid());
        } catch (ApiException e) {
            log.warn("looking up the serviceaccount of {}: {}", key, Failures.said(e));
            return RETRY;
        }
        if (sa == null) {
            return deleteToken(key.namespace(), key.name(), key.uid());
        }
        return fillIfNeeded(sa, secret);
    }

    /** TC-5: puts {@code ca.crt}, {@code namespace} and {@code token} into the Secret where they are missing or stale. */
    Result fillIfNeeded(V1ServiceAccount sa, V1Secret cached) {
        if (!needs(cached).any()) {
            return DONE;
        }
        String ns = cached.getMetadata().getNamespace();
        String name = cached.getMetadata().getName();
        V1Secret live;
        try {
            live = api.getSecret(ns, name);
        } catch (ApiException e) {
            if (ApiErrors.isNotFound(e)) {
                return DONE;
            }
            log.warn("reading secret {}/{}: {}", ns, name, Failures.said(e));
            return RETRY;
        }
        if (!Objects.equals(live.getMetadata().getResourceVersion(), cached.getMetadata().getResourceVersion())) {
            return DONE; // our cache is behind; the update event that follows brings the key back
        }
        Needs needs = needs(live);
        if (!needs.any()) {
            return DONE;
        }
        Map<String, byte[]> data = live.getData() == null ? new HashMap<>() : new HashMap<>(live.getData());
        if (needs.ca()) {
            data.put(CA_KEY, rootCa.clone());
        }
        if (needs.namespace()) {
            data.put(NAMESPACE_KEY, ns.getBytes(java.nio.charset.StandardCharsets.UTF_8));
        }
        if (needs.token()) {
            try {
                data.put(TOKEN_KEY, generator.generate(claims(sa, name))
                        .getBytes(java.nio.charset.StandardCharsets.US_ASCII));
            } catch (TokenGenerationException e) {
                log.error("signing a token for secret {}/{}: {}", ns, name, e.getMessage());
                return DONE;
            }
        }
        live.setData(data);
        Map<String, String> annotations = live.getMetadata().getAnnotations() == null ? new HashMap<>()
                : new HashMap<>(live.getMetadata().getAnnotations());
        annotations.put(SecretKey.SA_NAME_ANNOTATION, sa.getMetadata().getName());
        annotations.put(SecretKey.SA_UID_ANNOTATION, sa.getMetadata().getUid());
        live.getMetadata().setAnnotations(annotations);
        try {
            secrets.mutated(api.writeTokenData(live));
        } catch (ApiException e) {
            if (ApiErrors.isConflict(e) || ApiErrors.isNotFound(e)) {
                return DONE;
            }
            log.warn("filling secret {}/{}: {}", ns, name, Failures.said(e));
            return RETRY;
        }
        log.info("filled token secret {}/{} for serviceaccount {}", ns, name, sa.getMetadata().getName());
        return DONE;
    }

    /** What a token Secret lacks: a CA differing from ours, an empty {@code namespace}, an empty {@code token}. */
    record Needs(boolean ca, boolean namespace, boolean token) {
        boolean any() {
            return ca || namespace || token;
        }
    }

    Needs needs(V1Secret secret) {
        Map<String, byte[]> data = secret.getData() == null ? Map.of() : secret.getData();
        return new Needs(rootCa.length > 0 && !Arrays.equals(rootCa, data.get(CA_KEY)),
                empty(data.get(NAMESPACE_KEY)), empty(data.get(TOKEN_KEY)));
    }

    static LegacyClaims claims(V1ServiceAccount sa, String secretName) {
        return new LegacyClaims(sa.getMetadata().getNamespace(), sa.getMetadata().getName(),
                sa.getMetadata().getUid(), secretName);
    }

    /**
     * Token Secrets of the account, the controller's own recent writes included: its name annotation
     * matches and its UID annotation is empty or matches.
     */
    List<V1Secret> tokenSecretsOf(String namespace, String saName, String saUid) {
        List<V1Secret> out = new ArrayList<>();
        for (V1Secret s : secrets.inNamespace(namespace)) {
            if (TokenSecretOwner.belongsTo(s, saName, saUid)) {
                out.add(s);
            }
        }
        return out;
    }

    /** The cached account with that name whose UID matches (any UID when {@code uid} is empty), or null. */
    V1ServiceAccount cachedServiceAccount(String namespace, String name, String uid) {
        V1ServiceAccount sa = serviceAccounts.namespace(namespace).get(name);
        if (sa != null && (uid.isEmpty() || uid.equals(sa.getMetadata().getUid()))) {
            return sa;
        }
        return null;
    }

    /** As {@link #cachedServiceAccount}, asking the API server on a cache miss (the informer may be behind). */
    private V1ServiceAccount serviceAccount(String namespace, String name, String uid) throws ApiException {
        V1ServiceAccount sa = cachedServiceAccount(namespace, name, uid);
        if (sa != null) {
            return sa;
        }
        try {
            sa = api.getServiceAccount(namespace, name);
        } catch (ApiException e) {
            if (ApiErrors.isNotFound(e)) {
                return null;
            }
            throw e;
        }
        return uid.isEmpty() || uid.equals(sa.getMetadata().getUid()) ? sa : null;
    }

    /** Deletes a token Secret, only if it still has this UID; gone or replaced is not worth a retry. */
    Result deleteToken(String namespace, String name, String uid) {
        try {
            api.deleteSecret(namespace, name, uid);
            log.info("deleted token secret {}/{}: its serviceaccount is gone", namespace, name);
            return DONE;
        } catch (ApiException e) {
            if (ApiErrors.isNotFound(e) || ApiErrors.isConflict(e)) {
                return DONE;
            }
            log.warn("deleting token secret {}/{}: {}", namespace, name, Failures.said(e));
            return RETRY;
        }
    }

    /** Drops a deleted Secret from its account's {@code .secrets}, reading the account live (TC-4). */
    private void removeSecretReference(SecretKey key) throws ApiException {
        V1ServiceAccount sa;
        try {
            sa = api.getServiceAccount(key.namespace(), key.serviceAccountName());
        } catch (ApiException e) {
            if (ApiErrors.isNotFound(e)) {
                return;
            }
            throw e;
        }
        if (!key.serviceAccountUid().isEmpty() && !key.serviceAccountUid().equals(sa.getMetadata().getUid())) {
            return;
        }
        List<V1ObjectReference> refs = Optional.ofNullable(sa.getSecrets()).orElse(List.of());
        if (refs.stream().noneMatch(r -> key.name().equals(r.getName()))) {
            return;
        }
        api.removeSecretReference(sa, key.name());
    }

    private static boolean empty(byte[] b) {
        return b == null || b.length == 0;
    }
}
