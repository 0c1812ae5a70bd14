package io.satoken.controlplane.admission;

import java.util.List;
import java.util.Objects;
import java.util.stream.Stream;

/**
 * An admission answer, one of three: {@link Allowed} as the object is, {@link Patched} with a JSONPatch, or
 * {@link Denied} with an HTTP status and message (the API server returns that status and message to the client
 * that made the request). An allowed answer may carry warnings, which the API server passes on to the client
 * ({@code kubectl} prints them) without refusing anything.
 */
public sealed interface Verdict {

    /** Allowed, unchanged. */
    record Allowed(List<String> warnings) implements Verdict {
        public Allowed {
            warnings = List.copyOf(warnings);
        }

        public Allowed() {
            this(List.of());
        }
    }

    /** Allowed with {@code patch}, a JSON array of RFC 6902 operations. */
    record Patched(String patch, List<String> warnings) implements Verdict {
        public Patched {
            Objects.requireNonNull(patch, "patch");
            warnings = List.copyOf(warnings);
        }

        public Patched(String patch) {
            this(patch, List.of());
        }
    }

    /** Denied with an HTTP status, its reason and a message for the client. */
    record Denied(int code, String reason, String message) implements Verdict {
    }

    /** Whether the request may go on, patched or not. */
    default boolean allowed() {
        return !(this instanceof Denied);
    }

    /** The warnings for the client; none for a denial, whose message says it all. */
    default List<String> warnings() {
        return List.of();
    }

    /** This answer with {@code warnings} as well; a denial stays as it is. */
    default Verdict withWarnings(List<String> more) {
        if (more.isEmpty()) {
            return this;
        }
        List<String> all = Stream.concat(warnings().stream(), more.stream()).toList();
        if (this instanceof Patched p) {
            return new Patched(p.patch(), all);
        }
        return this instanceof Allowed ? new Allowed(all) : this;
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
