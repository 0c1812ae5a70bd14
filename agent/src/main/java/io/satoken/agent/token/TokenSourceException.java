package io.satoken.agent.token;

import java.time.Duration;
import java.util.Optional;

/**
 * A token could not be issued. The message names the key and the cause and never holds a token.
 * {@link #retryAfter()} carries a server's Retry-After (HTTP 429), which backoff must honour.
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

    /** The delay the server asked for before the next attempt, if it asked for one. */
    public Optional<Duration> retryAfter() {
        return Optional.ofNullable(retryAfter);
    }
}
