package io.satoken.agent.token;

import io.satoken.common.projection.TokenAsk;
import java.util.List;
import java.util.Objects;

/**
 * What identifies one token: projections with equal keys share one token and one API call.
 *
 * <p>TM-1: service account name, namespace, the audiences in order (a {@code null} list and an
 * empty list are different keys, as upstream tells them apart), expirationSeconds (null counts as 0)
 * and the bound object (null counts as {@link BoundObjectRef#NONE}). The key holds no secret and is
 * safe to log.
 *
 * @param audiences the requested audiences, in order; {@code null} means "the API server's own"
 * @param expirationSeconds the requested lifetime; 0 means "the server's default" (PV-2)
 */
public record TokenKey(
        String namespace,
        String serviceAccount,
        List<String> audiences,
        long expirationSeconds,
        BoundObjectRef boundObject) {

    public TokenKey {
        Objects.requireNonNull(namespace, "namespace");
        Objects.requireNonNull(serviceAccount, "serviceAccount");
        audiences = audiences == null ? null : List.copyOf(audiences);
        if (expirationSeconds < 0) {
            throw new IllegalArgumentException("expirationSeconds: must not be negative, got " + expirationSeconds);
        }
        boundObject = Objects.requireNonNullElse(boundObject, BoundObjectRef.NONE);
    }

    /** The token of {@code ask}, for the ServiceAccount, bound to {@code boundObject}. */
    public static TokenKey of(String namespace, String serviceAccount, TokenAsk ask, BoundObjectRef boundObject) {
        return new TokenKey(namespace, serviceAccount, ask.audiences(), ask.expirationSeconds(), boundObject);
    }

    /** What the key asks the API server for: its audiences ({@link TokenAsk} says what none means) and lifetime. */
    public TokenAsk ask() {
        return new TokenAsk(audiences, expirationSeconds);
    }

    /** {@code system:serviceaccount:<namespace>:<name>}, the subject the token will carry. */
    public String subject() {
        return "system:serviceaccount:" + namespace + ":" + serviceAccount;
    }

    @Override
    public String toString() {
        return namespace + "/" + serviceAccount
                + " audiences=" + (audiences == null ? "(the API server's own)" : audiences)
                + " expirationSeconds=" + expirationSeconds
                + (boundObject.isNone() ? "" : " boundTo=" + boundObject.kind() + "/" + boundObject.name()
                        + "(" + boundObject.uid() + ")");
    }
}
