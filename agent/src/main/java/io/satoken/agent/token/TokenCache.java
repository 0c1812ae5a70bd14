package io.satoken.agent.token;

import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;
import com.github.benmanes.caffeine.cache.Expiry;
import java.time.Instant;
import java.time.InstantSource;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;
import java.util.concurrent.atomic.LongAdder;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Tokens by {@link TokenKey}, with kubelet's serving rules (TM-4, TM-5, TM-7).
 *
 * <ul>
 *   <li>A cached token is served until it needs a refresh ({@link CachedToken#refreshAt}); no call.</li>
 *   <li>Otherwise one call to the {@link TokenSource} is made per key, however many callers ask at
 *       once: the first caller makes it, the others wait for its result (single flight).</li>
 *   <li>A failed refresh keeps serving the still-valid token (with {@link CachedToken#refreshError}
 *       set); only an absent or expired token is an error.</li>
 *   <li>An entry expires at the token's own expiry (strictly after it, TM-7) and is evicted.</li>
 * </ul>
 *
 * <p>Two maps, each with one job. {@code tokens}, a Caffeine cache, holds the tokens and evicts them at expiry.
 * {@code inFlight} holds the call in progress for a key, as a future its waiters join: the caller whose future
 * gets in makes the call on its own thread, and nobody holds a lock meanwhile, so a slow call for one key never
 * blocks another key. The token goes into the cache and the call leaves {@code inFlight} in one atomic step
 * ({@link #finish}), so a caller sees either the call or its result. Failed calls never enter Caffeine, which would
 * log a stack trace for each; the error is reported once, by whoever handles it.
 */
public final class TokenCache {

    private static final Logger log = LoggerFactory.getLogger(TokenCache.class);

    private final TokenSource source;
    private final RefreshPolicy policy;
    private final InstantSource clock;
    private final Cache<TokenKey, CachedToken> tokens;
    private final ConcurrentMap<TokenKey, CompletableFuture<CachedToken>> inFlight = new ConcurrentHashMap<>();
    private final LongAdder hits = new LongAdder();
    private final LongAdder misses = new LongAdder();

    public TokenCache(TokenSource source, RefreshPolicy policy, InstantSource clock) {
        this.source = Objects.requireNonNull(source, "source");
        this.policy = Objects.requireNonNull(policy, "policy");
        this.clock = Objects.requireNonNull(clock, "clock");
        this.tokens = Caffeine.newBuilder()
                .ticker(() -> epochNanos(clock.instant()))
                .executor(Runnable::run) // evictions happen on the caller's thread; nothing runs in the background
                .expireAfter(new ExpireWithToken())
                .build();
    }

    /**
     * The token for the key: the cached one while it does not need a refresh (TM-4), else a new one. While a
     * call for the key is in flight, its result.
     *
     * @throws TokenSourceException when there is no valid token to serve
     */
    public CachedToken get(TokenKey key) throws TokenSourceException {
        Optional<CachedToken> entry = peek(key);
        if (entry.isPresent() && !entry.get().requiresRefresh(clock.instant())) {
            hits.increment();
            return entry.get();
        }
        misses.increment();
        return fetch(key, false);
    }

    /**
     * Asks the source for a new token now, even if the cached one is still fresh; joins a call already
     * in flight for the key. Used by the refresh timer, which fires exactly when the refresh is due.
     */
    public CachedToken refresh(TokenKey key) throws TokenSourceException {
        return fetch(key, true);
    }

    /** The cached entry for the key, without fetching or refreshing; empty while a call for it is in flight. */
    public Optional<CachedToken> peek(TokenKey key) {
        return inFlight.containsKey(key) ? Optional.empty() : Optional.ofNullable(tokens.getIfPresent(key));
    }

    /**
     * The token the key's entry holds now, without fetching or refreshing, also while a call for the key is in flight
     * (the entry keeps its token until the call's result replaces it); empty when there is none or it expired.
     */
    public Optional<IssuedToken> current(TokenKey key) {
        return Optional.ofNullable(tokens.getIfPresent(key)).map(CachedToken::token);
    }

    /**
     * Puts a token found on disk into the cache (restart adoption) so it is served, not re-minted, until
     * its refresh is due. Refused, returning false, when the token is expired or already due, or when the
     * key has a token or a call in flight. (A call that starts just after this check finds the adopted
     * token and serves it, or replaces it with a newer one: either way the cache stays consistent.)
     */
    public boolean adopt(TokenKey key, IssuedToken token) {
        Instant now = clock.instant();
        CachedToken entry = new CachedToken(token, policy.refreshAt(token), null);
        if (token.isExpired(now) || entry.requiresRefresh(now) || inFlight.containsKey(key)) {
            return false;
        }
        return tokens.asMap().putIfAbsent(key, entry) == null;
    }

    /** Drops the key's token (its last user is gone); a call in flight for it still answers its waiters, uncached. */
    public void invalidate(TokenKey key) {
        inFlight.remove(key); // first: a call finishing now must not put its token back
        tokens.invalidate(key);
    }

    /** How many {@link #get} calls were answered from the cache. */
    public long hits() {
        return hits.sum();
    }

    /** How many {@link #get} calls had no fresh token cached and went to the source (or joined a call). */
    public long misses() {
        return misses.sum();
    }

    /** How many tokens are cached (including calls in flight). */
    public long size() {
        return tokens.estimatedSize() + inFlight.keySet().stream().filter(k -> !tokens.asMap().containsKey(k)).count();
    }

    /**
     * Single flight: the caller whose future gets into {@code inFlight} makes the call; the others wait for it.
     *
     * <pre>
     * 1. Register a future for the key, or join the one already there.
     * 2. Unless forced, serve the cached token if another caller refreshed it meanwhile.
     * 3. Ask the source; a failure still serves a valid cached token (TM-5), else is an error.
     * 4. Cache the result and leave inFlight in one step; complete the future for the waiters.
     * </pre>
     */
    private CachedToken fetch(TokenKey key, boolean force) throws TokenSourceException {
        // 1.
        CompletableFuture<CachedToken> call = new CompletableFuture<>();
        CompletableFuture<CachedToken> running = inFlight.putIfAbsent(key, call);
        if (running != null) {
            return await(running);
        }
        try {
            // 2.
            CachedToken previous = tokens.getIfPresent(key);
            CachedToken result = !force && previous != null && !previous.requiresRefresh(clock.instant())
                    ? previous
                    : issue(key, previous); // 3.
            // 4.
            finish(key, call, result);
            call.complete(result);
            return result;
        } catch (TokenSourceException e) {
            finish(key, call, null); // nothing valid remains
            call.completeExceptionally(e);
            throw e;
        } catch (RuntimeException | Error e) {
            // never leave waiters parked on a call that will not finish
            finish(key, call, null);
            Exception cause = e instanceof Exception x ? x : new Exception(e);
            call.completeExceptionally(failure("failed to fetch token " + key, cause));
            throw e;
        }
    }

    /** Asks the source for the key's token; {@code previous} is served, marked, if the call fails (TM-5). */
    private CachedToken issue(TokenKey key, CachedToken previous) throws TokenSourceException {
        try {
            IssuedToken token = source.issue(key);
            return new CachedToken(token, policy.refreshAt(token), null);
        } catch (TokenSourceException | RuntimeException e) {
            if (previous != null && !previous.token().isExpired(clock.instant())) {
                // TM-5: keep serving the valid token; the caller sees refreshError and retries later.
                TokenSourceException error = failure("refresh of token " + key + " failed", e);
                // the refresh scheduler logs the failure, once per attempt, with its retry
                log.debug("{}; serving the cached token, valid until {}", error.getMessage(),
                        previous.token().expiresAt());
                return previous.withRefreshError(error);
            }
            throw previous == null
                    ? failure("failed to fetch token " + key, e)
                    : failure("token " + key + " expired and refresh failed", e);
        }
    }

    /**
     * Ends the key's call: caches its result (or drops the entry, for {@code null}) and removes the call from
     * {@code inFlight}, atomically. Nothing is cached when the call is no longer registered: the key was
     * invalidated while it ran.
     */
    private void finish(TokenKey key, CompletableFuture<CachedToken> call, CachedToken result) {
        inFlight.computeIfPresent(key, (k, registered) -> {
            if (registered != call) {
                return registered;
            }
            if (result == null) {
                tokens.invalidate(k);
            } else {
                tokens.put(k, result);
            }
            return null;
        });
    }

    private static TokenSourceException failure(String what, Exception cause) {
        TokenSourceException source = cause instanceof TokenSourceException t ? t : null;
        return new TokenSourceException(what + ": " + cause.getMessage(),
                source == null ? null : source.retryAfter().orElse(null),
                source != null && source.permanent(), cause);
    }

    private static CachedToken await(CompletableFuture<CachedToken> call) throws TokenSourceException {
        try {
            return call.join();
        } catch (CompletionException e) {
            if (e.getCause() instanceof TokenSourceException t) {
                throw t;
            }
            throw e;
        }
    }

    /** Nanoseconds since the epoch, saturating (Caffeine's ticker and expiry speak nanoseconds). */
    static long epochNanos(Instant instant) {
        try {
            return Math.addExact(Math.multiplyExact(instant.getEpochSecond(), 1_000_000_000L), instant.getNano());
        } catch (ArithmeticException e) {
            return instant.getEpochSecond() < 0 ? Long.MIN_VALUE : Long.MAX_VALUE;
        }
    }

    /** An entry lives until its token expires; +1 ns because a token is still valid at its expiry (TM-7). */
    private static final class ExpireWithToken implements Expiry<TokenKey, CachedToken> {
        @Override
        public long expireAfterCreate(TokenKey key, CachedToken value, long currentTime) {
            long expiresAt = epochNanos(value.token().expiresAt());
            return expiresAt <= currentTime ? 0 : saturatingAdd(expiresAt - currentTime, 1);
        }

        @Override
        public long expireAfterUpdate(TokenKey key, CachedToken value, long currentTime, long currentDuration) {
            return expireAfterCreate(key, value, currentTime);
        }

        @Override
        public long expireAfterRead(TokenKey key, CachedToken value, long currentTime, long currentDuration) {
            return currentDuration;
        }

        private static long saturatingAdd(long a, long b) {
            long sum = a + b;
            return sum < a ? Long.MAX_VALUE : sum;
        }
    }
}
