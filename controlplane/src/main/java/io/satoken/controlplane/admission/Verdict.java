package io.satoken.controlplane.admission;

/**
 * An admission answer: allowed, with or without a JSONPatch, or denied with an HTTP status and message
 * (the API server returns that status and message to the client that made the request).
 *
 * @param patch RFC 6902 operations as a JSON array, or null for no change
 */
public record Verdict(boolean allowed, String patch, int code, String reason, String message) {

    public static Verdict allow() {
        return new Verdict(true, null, 200, "", "");
    }

    /** Allowed with {@code patch}, a JSON array of RFC 6902 operations; null is no patch. */
    public static Verdict allow(String patch) {
        return new Verdict(true, patch, 200, "", "");
    }

    /** Denied as upstream's {@code admission.NewForbidden} denies: 403, reason Forbidden. */
    public static Verdict forbidden(String message) {
        return new Verdict(false, null, 403, "Forbidden", message);
    }

    /** Denied because the request itself is malformed or invalid. */
    public static Verdict invalid(String message) {
        return new Verdict(false, null, 400, "BadRequest", message);
    }

    /** Denied because the webhook could not decide: a lookup failed, timed out, or the webhook is overloaded. */
    public static Verdict unavailable(String message) {
        return new Verdict(false, null, 503, "ServiceUnavailable", message);
    }
}
