package io.satoken.agent.token;

import io.kubernetes.client.openapi.ApiClient;
import io.kubernetes.client.openapi.ApiException;
import io.kubernetes.client.openapi.apis.CoreV1Api;
import io.kubernetes.client.openapi.models.AuthenticationV1TokenRequest;
import io.kubernetes.client.openapi.models.V1BoundObjectReference;
import io.kubernetes.client.openapi.models.V1TokenRequestSpec;
import io.kubernetes.client.openapi.models.V1TokenRequestStatus;
import io.satoken.common.kube.RateLimiter;
import io.satoken.common.text.DurationText;
import java.util.Objects;

/**
 * Issues tokens through the TokenRequest API: {@code POST
 * /api/v1/namespaces/{ns}/serviceaccounts/{name}/token}, sent the way kubelet sends it (PV-14).
 *
 * <p>Every request first takes a slot from the client-side {@link RateLimiter}, on the calling
 * thread. Failures become {@link TokenSourceException}s that say whether to retry (see
 * {@link TokenRequestFailure}); neither the token nor the request body ever appears in one.
 */
public final class TokenRequestSource implements TokenSource {

    private final CoreV1Api api;
    private final RateLimiter limiter;

    public TokenRequestSource(ApiClient client, RateLimiter limiter) {
        this.api = new CoreV1Api(Objects.requireNonNull(client, "client"));
        this.limiter = Objects.requireNonNull(limiter, "limiter");
    }

    @Override
    public IssuedToken issue(TokenKey key) throws TokenSourceException {
        awaitSlot(key);
        AuthenticationV1TokenRequest response;
        try {
            response = api.createNamespacedServiceAccountToken(key.serviceAccount(), key.namespace(), requestFor(key))
                    .execute();
        } catch (ApiException e) {
            throw TokenRequestFailure.toException(key, e);
        } catch (RuntimeException e) {
            // A 2xx body that is not a TokenRequest. client-java's parse errors quote the JSON, which
            // may hold a token, so neither their message nor the exception itself is kept.
            throw new TokenSourceException(TokenRequestFailure.prefix(key)
                    + "unreadable response: the API server's answer is not a TokenRequest");
        }
        return issuedToken(key, response);
    }

    /**
     * The request kubelet would send (PV-14): audiences as given, null staying null (the server then
     * uses its own API audiences, PV-3); expirationSeconds 0 sent as null (the server defaults it to
     * 3600, PV-2); a Pod reference when the key is bound to one.
     */
    static AuthenticationV1TokenRequest requestFor(TokenKey key) {
        V1TokenRequestSpec spec = new V1TokenRequestSpec()
                .audiences(key.audiences())
                .expirationSeconds(key.expirationSeconds() == 0 ? null : key.expirationSeconds());
        BoundObjectRef bound = key.boundObject();
        if (!bound.isNone()) {
            spec.boundObjectRef(new V1BoundObjectReference()
                    .apiVersion(bound.apiVersion())
                    .kind(bound.kind())
                    .name(bound.name())
                    .uid(bound.uid()));
        }
        return new AuthenticationV1TokenRequest().spec(spec);
    }

    /** Reads the token and its expiry; the lifetime is the server's (defaulted) spec, else the requested one. */
    static IssuedToken issuedToken(TokenKey key, AuthenticationV1TokenRequest response) throws TokenSourceException {
        V1TokenRequestStatus status = response == null ? null : response.getStatus();
        if (status == null || status.getToken() == null || status.getToken().isEmpty()
                || status.getExpirationTimestamp() == null) {
            throw new TokenSourceException(TokenRequestFailure.prefix(key)
                    + "the response has no status.token or no status.expirationTimestamp");
        }
        Long seconds = response.getSpec() == null ? null : response.getSpec().getExpirationSeconds();
        if (seconds == null && key.expirationSeconds() != 0) {
            seconds = key.expirationSeconds();
        }
        try {
            return IssuedToken.fromResponse(status.getToken(), status.getExpirationTimestamp().toInstant(), seconds);
        } catch (IllegalArgumentException e) {
            throw new TokenSourceException(TokenRequestFailure.prefix(key) + e.getMessage(), e);
        }
    }

    private void awaitSlot(TokenKey key) throws TokenSourceException {
        try {
            if (!limiter.acquire()) {
                throw new TokenSourceException(TokenRequestFailure.prefix(key) + "client-side rate limit ("
                        + limiter + ") has no free slot within " + DurationText.of(limiter.maxWait()));
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new TokenSourceException(TokenRequestFailure.prefix(key)
                    + "interrupted while waiting for the client-side rate limit", e);
        }
    }
}
