package io.satoken.agent.token;

import com.github.benmanes.caffeine.cache.AsyncCache;
import com.github.benmanes.caffeine.cache.Caffeine;
import com.github.benmanes.caffeine.cache.Expiry;
import java.time.Duration;
import java.time.Instant;
import java.time.InstantSource;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
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
 * <p>The calls run on the caller's thread. Entries are futures in a Caffeine {@link AsyncCache}, so a
 * slow call for one key never holds a lock that another key needs.
 */
public final class TokenCache {

    private static final Logger log = LoggerFactory.getLogger(TokenCache.class);

    private final TokenSource source;
    private final RefreshTime policy;
    private final InstantSource clock;
    private final AsyncCache<TokenKey, CachedToken> cache;
    private final LongAdder hits = new LongAdder();
    private final LongAdder misses = new LongAdder();

    public TokenCache(TokenSource source, RefreshTime policy, InstantSource clock) {
        this.source = Objects.requireNonNull(source, "source");
        this.policy = Objects.requireNonNull(policy, "policy");
        this.clock = Objects.requireNonNull(clock, "clock");
        this.cache = Caffeine.newBuilder()
                .ticker(() -> epochNanos(clock.instant()))
                .executor(Runnable::run) // nothing runs asynchronously: callers complete the futures
                .expireAfter(new ExpireWithToken())
                .buildAsync();
    }

    /**
     * The token for the key: the cached one while it does not need a refresh (TM-4), else a new one.
     *
     * @throws TokenSourceException when there is no valid token to serve
     */
    public CachedToken get(TokenKey key) throws TokenSourceException {
        CompletableFuture<CachedToken> cached = cache.getIfPresent(key);
        if (cached != null && cached.isDone() && !cached.isCompletedExceptionally()) {
            CachedToken entry = cached.join();
            if (!entry.requiresRefresh(clock.instant())) {
                hits.increment();
                return entry;
            }
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

    /** The live cached entry for the key, without fetching or refreshing. */
    public Optional<CachedToken> peek(TokenKey key) {
        CompletableFuture<CachedToken> cached = cache.getIfPresent(key);
        return cached == null || !cached.isDone() || cached.isCompletedExceptionally()
                ? Optional.empty()
                : Optional.of(cached.join());
    }

    /**
     * Puts a token found on disk into the cache (restart adoption) so it is served, not re-minted, until
     * its refresh is due. Refused, returning false, when the token is expired or already due, or when the
     * key has a token or a call in flight.
     */
    public boolean adopt(TokenKey key, IssuedToken token) {
        Instant now = clock.instant();
        CachedToken entry = new CachedToken(token, policy.refreshAt(token), null);
        if (token.isExpired(now) || entry.requiresRefresh(now)) {
            return false;
        }
        return cache.asMap().putIfAbsent(key, CompletableFuture.completedFuture(entry)) == null;
    }

    /** Drops the key's token (its last user is gone). */
    public void invalidate(TokenKey key) {
        cache.synchronous().invalidate(key);
    }

    /** TM-10: drops every token bound to the pod with this UID. */
    public void invalidatePod(String podUid) {
        cache.synchronous().asMap().keySet().removeIf(
                key -> key.boundObject().isPod() && key.boundObject().uid().equals(podUid));
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
        return cache.synchronous().estimatedSize();
    }

    private CachedToken fetch(TokenKey key, boolean force) throws TokenSourceException {
        Instant now = clock.instant();
        CompletableFuture<CachedToken> mine = new CompletableFuture<>();
        CachedToken[] previous = new CachedToken[1];
        CompletableFuture<CachedToken> winner = cache.asMap().compute(key, (k, current) -> {
            if (current == null) {
                return mine;
            }
            if (!current.isDone()) {
                return current; // single flight: wait for the call in progress
            }
            CachedToken entry = current.isCompletedExceptionally() ? null : current.join();
            if (entry != null && !force && !entry.requiresRefresh(now)) {
                return current; // another caller refreshed it while we were deciding
            }
            previous[0] = entry;
            return mine;
        });
        if (winner != mine) {
            return await(winner);
        }

        try {
            IssuedToken token = source.issue(key);
            CachedToken fresh = new CachedToken(token, policy.refreshAt(token), null);
            mine.complete(fresh);
            return fresh;
        } catch (TokenSourceException | RuntimeException e) {
            CachedToken stale = previous[0];
            Instant failedAt = clock.instant();
            if (stale != null && !stale.token().isExpired(failedAt)) {
                // TM-5: keep serving the valid token; the caller sees refreshError and retries later.
                TokenSourceException error = failure("refresh of token " + key + " failed", e);
                // the refresh scheduler logs the failure, once per attempt, with its retry
                log.debug("{}; serving the cached token, valid until {}", error.getMessage(), stale.token().expiresAt());
                CachedToken kept = stale.withRefreshError(error);
                mine.complete(kept);
                return kept;
            }
            TokenSourceException error = stale == null
                    ? failure("failed to fetch token " + key, e)
                    : failure("token " + key + " expired and refresh failed", e);
            mine.completeExceptionally(new FetchFailed(error)); // Caffeine drops it: nothing stale remains
            throw error;
        } catch (Error e) {
            // never leave waiters parked on a call that will not finish
            mine.completeExceptionally(new FetchFailed(failure("failed to fetch token " + key, new Exception(e))));
            throw e;
        }
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
        } catch (FetchFailed e) {
            throw e.error;
        } catch (CompletionException e) {
            if (e.getCause() instanceof FetchFailed f) {
                throw f.error;
            }
            throw e;
        }
    }

    /**
     * Completes a failed call's future. Caffeine logs a stack trace for every future that fails with
     * anything but a cancellation; a fetch failure is already reported once by whoever handles it, so
     * it travels to the waiting callers as a cancellation that carries the real error.
     */
    private static final class FetchFailed extends CancellationException {
        final transient TokenSourceException error;

        FetchFailed(TokenSourceException error) {
            super(error.getMessage());
            this.error = error;
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
