package io.satoken.controlplane.admission;

import java.util.Objects;

/**
 * An admission answer, one of three: {@link Allowed} as the object is, {@link Patched} with a JSONPatch, or
 * {@link Denied} with an HTTP status and message (the API server returns that status and message to the client
 * that made the request).
 */
public sealed interface Verdict {

    /** Allowed, unchanged. */
    record Allowed() implements Verdict {
    }

    /** Allowed with {@code patch}, a JSON array of RFC 6902 operations. */
    record Patched(String patch) implements Verdict {
        public Patched {
            Objects.requireNonNull(patch, "patch");
        }
    }

    /** Denied with an HTTP status, its reason and a message for the client. */
    record Denied(int code, String reason, String message) implements Verdict {
    }

    /** Whether the request may go on, patched or not. */
    default boolean allowed() {
        return !(this instanceof Denied);
    }

    static Verdict allow() {
        return new Allowed();
    }

    /** Allowed with {@code patch}, a JSON array of RFC 6902 operations. */
    static Verdict patch(String patch) {
        return new Patched(patch);
    }

    static Denied deny(int code, String reason, String message) {
        return new Denied(code, reason, message);
    }

    /** Denied as upstream's {@code admission.NewForbidden} denies: 403, reason Forbidden. */
    static Denied forbidden(String message) {
        return deny(403, "Forbidden", message);
    }

    /** Denied because the request itself is malformed or invalid. */
    static Denied invalid(String message) {
        return deny(400, "BadRequest", message);
    }

    /** Denied because the webhook could not decide: a lookup failed, timed out, or the webhook is overloaded. */
    static Denied unavailable(String message) {
        return deny(503, "ServiceUnavailable", message);
    }
}
