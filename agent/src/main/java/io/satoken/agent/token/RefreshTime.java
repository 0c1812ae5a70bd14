package io.satoken.agent.token;

import java.time.Instant;

/**
 * When an issued token is due for a refresh; the {@link TokenCache} asks it once per token. The rules (kubelet's
 * 80 % and 24 h, with a jitter) are {@code refresh.RefreshPolicy}'s, kept there so this package does not depend on
 * the refresh scheduler's.
 */
@FunctionalInterface
public interface RefreshTime {

    /** The instant after which the token needs a refresh. */
    Instant refreshAt(IssuedToken token);
}
