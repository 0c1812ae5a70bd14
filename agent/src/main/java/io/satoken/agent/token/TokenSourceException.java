package io.satoken.agent.token;

import java.time.Duration;
import java.util.Optional;

/**
 * A token could not be issued. The message names the key and the cause and never holds a token.
 * {@link #retryAfter()} carries a server's Retry-After (HTTP 429), which backoff must honour;
 * {@link #permanent()} says that asking again with the same key will fail the same way.
 */
public class TokenSourceException extends Exception {

    private final Duration retryAfter;
    private final boolean permanent;

    public TokenSourceException(String message) {
        this(message, null, null);
    }

    public TokenSourceException(String message, Throwable cause) {
        this(message, null, cause);
    }

    public TokenSourceException(String message, Duration retryAfter, Throwable cause) {
        this(message, retryAfter, false, cause);
    }

    /**
     * @param permanent the server refused the request itself (403, 404, 422): repeating it soon gives the
     *     same answer, so it is retried only at the backoff cap
     */
    public TokenSourceException(String message, Duration retryAfter, boolean permanent, Throwable cause) {
        super(message, cause);
        this.retryAfter = retryAfter;
        this.permanent = permanent;
    }

    /** A refusal that retrying soon would not change (HTTP 403, 404, 422), as opposed to an outage. */
    public boolean permanent() {
        return permanent;
    }

    /**
     * A failure that retrying the same request cannot fix (the ServiceAccount does not exist, the agent
     * may not ask for it, the request is invalid); retry it rarely, if at all, and never in a tight loop.
     */
    public static TokenSourceException permanent(String message, Throwable cause) {
        return new TokenSourceException(message, null, true, cause);
    }

    /** The delay the server asked for before the next attempt, if it asked for one. */
    public Optional<Duration> retryAfter() {
        return Optional.ofNullable(retryAfter);
    }
}
