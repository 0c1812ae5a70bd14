package io.satoken.agent.token;

/** Where tokens come from: the TokenRequest API on a cluster, or {@link LocalIssuer} without one. */
@FunctionalInterface
public interface TokenSource {

    /**
     * Issues a new token for the key. Called from several threads at once for different keys.
     *
     * @throws TokenSourceException when no token could be issued; it says whether and when to retry
     */
    IssuedToken issue(TokenKey key) throws TokenSourceException;
}
