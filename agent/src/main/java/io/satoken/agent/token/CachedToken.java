package io.satoken.agent.token;

import java.time.Instant;

/**
 * A token as the cache holds it.
 *
 * @param token the token served to callers
 * @param refreshAt the instant after which it needs a refresh ({@link RefreshPolicy#refreshAt})
 * @param refreshError why the last refresh failed, or null when the token is the result of the last
 *     attempt; a still-valid token keeps being served after a failed refresh (TM-5)
 */
public record CachedToken(IssuedToken token, Instant refreshAt, TokenSourceException refreshError) {

    public boolean requiresRefresh(Instant now) {
        return now.isAfter(refreshAt);
    }

    CachedToken withRefreshError(TokenSourceException error) {
        return new CachedToken(token, refreshAt, error);
    }
}
