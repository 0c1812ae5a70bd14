package io.satoken.agent.testing;

import io.satoken.agent.token.IssuedToken;
import io.satoken.agent.token.TokenKey;
import io.satoken.agent.token.TokenSource;
import io.satoken.agent.token.TokenSourceException;
import java.time.Duration;
import java.time.InstantSource;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.List;

/**
 * A {@link TokenSource} that issues opaque tokens {@code token-<n>} valid for a fixed TTL from the
 * clock's now (or, when built on an issuer, that issuer's tokens), records every call, and fails the
 * calls it was told to fail.
 */
public final class ScriptedTokenSource implements TokenSource {

    private final InstantSource clock;
    private final Duration ttl;
    private final TokenSource issuer;
    private final Deque<TokenSourceException> failures = new ArrayDeque<>();
    private final List<TokenKey> calls = new ArrayList<>();
    private boolean failAlways;
    private TokenSourceException failAlwaysWith;

    public ScriptedTokenSource(InstantSource clock, Duration ttl) {
        this.clock = clock;
        this.ttl = ttl;
        this.issuer = null;
    }

    /** Issues {@code issuer}'s tokens (a {@code LocalIssuer}'s real JWTs, say), scripted and counted as above. */
    public ScriptedTokenSource(TokenSource issuer) {
        this.clock = null;
        this.ttl = null;
        this.issuer = issuer;
    }

    /** The next calls fail with these, in order, before calls succeed again. */
    public synchronized ScriptedTokenSource failNext(TokenSourceException... errors) {
        failures.addAll(List.of(errors));
        return this;
    }

    /** Every call fails with {@code error} until {@link #recover()}. */
    public synchronized ScriptedTokenSource failAlways(TokenSourceException error) {
        failAlways = true;
        failAlwaysWith = error;
        return this;
    }

    public synchronized void recover() {
        failAlways = false;
        failures.clear();
    }

    @Override
    public IssuedToken issue(TokenKey key) throws TokenSourceException {
        int n;
        synchronized (this) {
            calls.add(key);
            n = calls.size();
            if (failAlways) {
                throw failAlwaysWith;
            }
            if (!failures.isEmpty()) {
                throw failures.poll();
            }
        }
        if (issuer != null) {
            return issuer.issue(key);
        }
        var now = clock.instant();
        return new IssuedToken("token-" + n, now, now.plus(ttl));
    }

    public synchronized int calls() {
        return calls.size();
    }

    public synchronized List<TokenKey> callKeys() {
        return List.copyOf(calls);
    }
}
