package io.satoken.agent.token;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.satoken.agent.testing.FakeClock;
import io.satoken.agent.testing.RefreshHarness;
import io.satoken.agent.testing.ScriptedTokenSource;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

class TokenCacheTest {

    private static final Instant START = RefreshHarness.START;
    private static final Duration TTL = RefreshHarness.TTL;
    private static final TokenKey KEY = new TokenKey("ns", "app", List.of("vault"), 3600, BoundObjectRef.NONE);

    private final RefreshHarness refresh = RefreshHarness.standard();
    private final FakeClock clock = refresh.clock();
    private final ScriptedTokenSource source = refresh.source();
    private final TokenCache cache = refresh.cache();

    @Test
    void get_servesTheCachedTokenWithoutACall() throws Exception {
        // TM-4
        CachedToken first = cache.get(KEY);
        clock.advance(Duration.ofMinutes(10));
        CachedToken second = cache.get(KEY);
        assertThat(second.token()).isSameAs(first.token());
        assertThat(source.calls()).isEqualTo(1);
        assertThat(cache.hits()).isEqualTo(1);
        assertThat(cache.misses()).isEqualTo(1);
    }

    @Test
    void get_refreshesOnlyPastTheEightyPercentPoint() throws Exception {
        // TM-8: a 1 h token is refreshed strictly after 48 min.
        IssuedToken first = cache.get(KEY).token();
        clock.set(START.plus(Duration.ofMinutes(48)));
        assertThat(cache.get(KEY).token()).isSameAs(first);
        clock.set(START.plus(Duration.ofMinutes(48)).plusMillis(1));
        IssuedToken second = cache.get(KEY).token();
        assertThat(second).isNotSameAs(first);
        assertThat(second.issuedAt()).isEqualTo(START.plus(Duration.ofMinutes(48)).plusMillis(1));
        assertThat(source.calls()).isEqualTo(2);
    }

    @Test
    void refresh_callsTheSourceEvenWhenFresh() throws Exception {
        IssuedToken first = cache.get(KEY).token();
        IssuedToken second = cache.refresh(KEY).token();
        assertThat(second).isNotSameAs(first);
        assertThat(cache.get(KEY).token()).isSameAs(second);
        assertThat(source.calls()).isEqualTo(2);
    }

    @Test
    void singleFlight_sixteenConcurrentCallersMakeOneCall() throws Exception {
        CountDownLatch release = new CountDownLatch(1);
        AtomicInteger calls = new AtomicInteger();
        TokenSource slow = key -> {
            calls.incrementAndGet();
            try {
                release.await(10, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            return new IssuedToken("token", START, START.plus(TTL));
        };
        TokenCache shared = new TokenCache(slow, RefreshPolicy.standard(), clock);
        Set<IssuedToken> seen = ConcurrentHashMap.newKeySet();
        List<Thread> callers = new ArrayList<>();
        for (int i = 0; i < 16; i++) {
            Thread t = new Thread(() -> {
                try {
                    seen.add(shared.get(KEY).token());
                } catch (TokenSourceException e) {
                    throw new AssertionError(e);
                }
            });
            callers.add(t);
            t.start();
        }
        awaitAllParked(callers);
        release.countDown();
        for (Thread t : callers) {
            t.join(10_000);
        }
        assertThat(calls).hasValue(1);
        assertThat(seen).hasSize(1);
    }

    @Test
    void failedRefresh_servesTheCachedTokenUntilExpiryThenErrors() throws Exception {
        // TM-5, TM-7
        IssuedToken first = cache.get(KEY).token();
        source.failAlways(new TokenSourceException("apiserver unavailable"));

        clock.set(START.plus(Duration.ofMinutes(50)));
        CachedToken stale = cache.get(KEY);
        assertThat(stale.token()).isSameAs(first);
        assertThat(stale.refreshError()).hasMessageContaining("apiserver unavailable").hasMessageContaining("ns/app");

        clock.set(first.expiresAt()); // TM-7: still valid at the expiration instant
        assertThat(cache.get(KEY).token()).isSameAs(first);

        clock.set(first.expiresAt().plusNanos(1));
        assertThatThrownBy(() -> cache.get(KEY))
                .isInstanceOf(TokenSourceException.class)
                .hasMessageContaining("failed to fetch token ns/app")
                .hasMessageContaining("apiserver unavailable")
                .hasMessageNotContaining(first.token());
    }

    @Test
    void failedFirstFetch_isAnErrorAndNothingIsCached() {
        source.failNext(new TokenSourceException("forbidden"));
        assertThatThrownBy(() -> cache.get(KEY)).hasMessageContaining("forbidden");
        assertThat(cache.peek(KEY)).isEmpty();
    }

    @Test
    void recoveredRefresh_clearsTheError() throws Exception {
        cache.get(KEY);
        source.failNext(new TokenSourceException("blip"));
        clock.set(START.plus(Duration.ofMinutes(50)));
        assertThat(cache.get(KEY).refreshError()).isNotNull();
        CachedToken recovered = cache.get(KEY);
        assertThat(recovered.refreshError()).isNull();
        assertThat(recovered.token().issuedAt()).isEqualTo(START.plus(Duration.ofMinutes(50)));
    }

    @Test
    void retryAfter_survivesTheCache() {
        source.failNext(new TokenSourceException("too many requests", Duration.ofSeconds(7), null));
        assertThatThrownBy(() -> cache.get(KEY))
                .isInstanceOfSatisfying(TokenSourceException.class,
                        e -> assertThat(e.retryAfter()).contains(Duration.ofSeconds(7)));
    }

    @Test
    void permanentRefusal_survivesTheCache() {
        source.failNext(new TokenSourceException("404 Not Found", null, true, null));
        assertThatThrownBy(() -> cache.get(KEY))
                .isInstanceOfSatisfying(TokenSourceException.class, e -> assertThat(e.permanent()).isTrue());
    }

    @Test
    void adopt_servesTheTokenFromDiskWithoutACall_untilItsRefreshIsDue() throws Exception {
        // Restart adoption: a token issued 10 min ago is served as is; TM-8 still decides when it is refreshed.
        IssuedToken onDisk = new IssuedToken("disk", START.minus(Duration.ofMinutes(10)),
                START.plus(Duration.ofMinutes(50)));
        assertThat(cache.adopt(KEY, onDisk)).isTrue();
        assertThat(cache.get(KEY).token()).isSameAs(onDisk);
        assertThat(source.calls()).isZero();

        clock.set(START.plus(Duration.ofMinutes(38)).plusMillis(1)); // past 48 min of its 60 min life
        assertThat(cache.get(KEY).token()).isNotSameAs(onDisk);
        assertThat(source.calls()).isEqualTo(1);
    }

    @Test
    void adopt_afterARestart_keepsTheRefreshTimeTheTokenWasMintedWith() throws Exception {
        // A restarted agent (a new cache, a new policy) adopting its tokens from disk refreshes each when the
        // old process would have: the jitter comes from the token, so none falls due early and is re-minted.
        AtomicInteger minted = new AtomicInteger();
        TokenSource source = key -> new IssuedToken("minted-" + minted.incrementAndGet(), clock.instant(),
                clock.instant().plus(TTL));
        List<CachedToken> before = new ArrayList<>();
        TokenCache first = new TokenCache(source, RefreshPolicy.spread(), clock);
        for (int i = 0; i < 50; i++) {
            before.add(first.get(new TokenKey("ns", "app" + i, List.of("vault"), 3600, BoundObjectRef.NONE)));
        }
        Instant soonest = before.stream().map(CachedToken::refreshAt).min(Instant::compareTo).orElseThrow();
        clock.set(soonest.minusMillis(1)); // the restart comes just before the first of them falls due

        TokenCache restarted = new TokenCache(source, RefreshPolicy.spread(), clock);
        for (int i = 0; i < 50; i++) {
            TokenKey key = new TokenKey("ns", "app" + i, List.of("vault"), 3600, BoundObjectRef.NONE);
            assertThat(restarted.adopt(key, before.get(i).token())).as("adopted %s", key).isTrue();
            assertThat(restarted.peek(key).orElseThrow().refreshAt()).isEqualTo(before.get(i).refreshAt());
        }
        assertThat(minted).hasValue(50);
    }

    @Test
    void adopt_refusesExpiredOrDueTokens_andNeverReplacesACachedOne() throws Exception {
        IssuedToken due = new IssuedToken("due", START.minus(Duration.ofMinutes(49)), START.plus(Duration.ofMinutes(11)));
        IssuedToken expired = new IssuedToken("old", START.minus(Duration.ofHours(2)), START.minus(Duration.ofHours(1)));
        assertThat(cache.adopt(KEY, due)).isFalse();
        assertThat(cache.adopt(KEY, expired)).isFalse();
        assertThat(cache.peek(KEY)).isEmpty();

        IssuedToken cached = cache.get(KEY).token();
        IssuedToken fresh = new IssuedToken("fresh", START, START.plus(TTL));
        assertThat(cache.adopt(KEY, fresh)).isFalse();
        assertThat(cache.get(KEY).token()).isSameAs(cached);
    }

    @Test
    void expiry_evictsTheEntry() throws Exception {
        IssuedToken first = cache.get(KEY).token();
        clock.set(first.expiresAt());
        assertThat(cache.peek(KEY)).isPresent();
        clock.set(first.expiresAt().plusNanos(1));
        assertThat(cache.peek(KEY)).isEmpty();
    }

    @Test
    void invalidSourceResponse_isAnErrorNotACrash() {
        TokenSource broken = key -> new IssuedToken("t", START, START.minusSeconds(5));
        TokenCache c = new TokenCache(broken, RefreshPolicy.standard(), clock);
        assertThatThrownBy(() -> c.get(KEY))
                .isInstanceOf(TokenSourceException.class)
                .hasMessageContaining("expiresAt: must be after issuedAt");
    }

    @Test
    @Timeout(10) // without the release the second call would wait forever
    void sourceThrowingAnError_releasesTheKeyForTheNextCaller() throws Exception {
        boolean[] broken = {true};
        TokenCache c = new TokenCache(key -> {
            if (broken[0]) {
                throw new StackOverflowError("source bug");
            }
            return new IssuedToken("t", START, START.plus(TTL));
        }, RefreshPolicy.standard(), clock);
        assertThatThrownBy(() -> c.get(KEY)).isInstanceOf(StackOverflowError.class);
        broken[0] = false;
        assertThat(c.get(KEY).token().token()).isEqualTo("t"); // no call stuck in flight
    }

    @Test
    void nullAndEmptyAudiences_areDifferentKeys() throws Exception {
        // TM-1
        cache.get(new TokenKey("ns", "app", null, 3600, null));
        cache.get(new TokenKey("ns", "app", List.of(), 3600, null));
        assertThat(source.calls()).isEqualTo(2);
    }

    @Test
    void audienceOrder_matters() throws Exception {
        // TM-1
        cache.get(new TokenKey("ns", "app", List.of("a", "b"), 3600, null));
        cache.get(new TokenKey("ns", "app", List.of("b", "a"), 3600, null));
        assertThat(source.calls()).isEqualTo(2);
    }

    @Test
    void invalidate_whileACallIsInFlight_theCallsTokenIsNotCached() throws Exception {
        CountDownLatch release = new CountDownLatch(1);
        TokenSource slow = key -> {
            try {
                release.await(10, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            return new IssuedToken("token", START, START.plus(TTL));
        };
        TokenCache c = new TokenCache(slow, RefreshPolicy.standard(), clock);
        List<IssuedToken> got = new ArrayList<>();
        Thread caller = new Thread(() -> {
            try {
                got.add(c.get(KEY).token());
            } catch (TokenSourceException e) {
                throw new AssertionError(e);
            }
        });
        caller.start();
        awaitAllParked(List.of(caller));
        c.invalidate(KEY); // the key's last user went away while its token was being requested
        release.countDown();
        caller.join(10_000);
        assertThat(got).hasSize(1); // the caller still gets its answer
        assertThat(c.peek(KEY)).isEmpty();
        assertThat(c.size()).isZero();
    }

    @Test
    void current_isTheCachedTokenWithoutACall_untilItExpires() throws Exception {
        assertThat(cache.current(KEY)).isEmpty();
        IssuedToken token = cache.get(KEY).token();
        clock.set(START.plus(Duration.ofMinutes(50))); // due for a refresh: current still makes no call
        assertThat(cache.current(KEY)).containsSame(token);
        clock.set(token.expiresAt()); // TM-7: valid at its expiry
        assertThat(cache.current(KEY)).containsSame(token);
        clock.set(token.expiresAt().plusNanos(1));
        assertThat(cache.current(KEY)).isEmpty();
        assertThat(source.calls()).isEqualTo(1);
    }

    @Test
    void toString_neverShowsTheToken() throws Exception {
        CachedToken c = cache.get(KEY);
        assertThat(c.toString()).doesNotContain(c.token().token());
    }

    /** Waits (without sleeping) until every caller but one is parked waiting for the call in flight. */
    private static void awaitAllParked(List<Thread> callers) {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (callers.stream().filter(t -> t.getState() == Thread.State.WAITING
                || t.getState() == Thread.State.TIMED_WAITING || t.getState() == Thread.State.BLOCKED).count() < callers.size()) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError("callers did not all reach the cache");
            }
            Thread.onSpinWait();
        }
    }
}
