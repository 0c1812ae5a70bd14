package io.satoken.agent.token;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.satoken.agent.testing.FixedRandom;
import java.time.Duration;
import java.time.Instant;
import java.util.Random;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

class RefreshPolicyTest {

    private static final Instant START = Instant.parse("2026-01-01T00:00:00Z");

    private static IssuedToken token(Duration ttl) {
        return new IssuedToken("t", START, START.plus(ttl));
    }

    record Case(String name, Duration ttl, Duration elapsed, boolean requiresRefresh) {
        @Override
        public String toString() {
            return name;
        }
    }

    // TM-9: the upstream TestRequiresRefresh table (jitter 0).
    static Stream<Case> upstreamTable() {
        return Stream.of(
                new Case("ttl 60m at 10m: fresh", Duration.ofMinutes(60), Duration.ofMinutes(10), false),
                new Case("ttl 60m at 50m: past the 80% point (48m)", Duration.ofMinutes(60), Duration.ofMinutes(50), true),
                new Case("ttl 60h at 25h: the 24h rule", Duration.ofHours(60), Duration.ofHours(25), true),
                new Case("ttl 60m at 70m: already expired", Duration.ofMinutes(60), Duration.ofMinutes(70), true));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("upstreamTable")
    void requiresRefresh_upstreamTable(Case c) {
        assertThat(RefreshPolicy.requiresRefresh(token(c.ttl), START.plus(c.elapsed), Duration.ZERO))
                .isEqualTo(c.requiresRefresh);
    }

    @Test
    void untilExpiry_servesATokenUntilItExpires_whateverItsLifetime() {
        // tokenSource: kubelet: the kubelet refreshes, so the agent's own 80 % and 24 h points do not apply
        for (Duration ttl : java.util.List.of(Duration.ofMinutes(10), Duration.ofHours(1), Duration.ofHours(60))) {
            assertThat(RefreshPolicy.untilExpiry().refreshAt(token(ttl))).as("ttl %s", ttl).isEqualTo(START.plus(ttl));
        }
    }

    @Test
    void eightyPercentRule_isStrictAtTheBoundary() {
        // TM-8: now > exp - floor(ttl*20/100); at exactly 48 min of 60 the token is still fresh.
        IssuedToken t = token(Duration.ofMinutes(60));
        Instant boundary = START.plus(Duration.ofMinutes(48));
        assertThat(RefreshPolicy.deadline(t)).isEqualTo(boundary);
        assertThat(RefreshPolicy.requiresRefresh(t, boundary, Duration.ZERO)).isFalse();
        assertThat(RefreshPolicy.requiresRefresh(t, boundary.plusNanos(1), Duration.ZERO)).isTrue();
    }

    @Test
    void eightyPercentRule_usesWholeSecondsLikeUpstream() {
        // TM-8: integer division on seconds: ttl 3601 s gives a window of floor(720.2) = 720 s.
        IssuedToken t = token(Duration.ofSeconds(3601));
        assertThat(RefreshPolicy.deadline(t)).isEqualTo(t.expiresAt().minusSeconds(720));
    }

    @Test
    void maxAgeRule_isStrictAtTwentyFourHours() {
        // TM-C1/TM-8: a 60 h token is refreshed after 24 h, not at its 80 % point (48 h).
        IssuedToken t = token(Duration.ofHours(60));
        Instant boundary = START.plus(Duration.ofHours(24));
        assertThat(RefreshPolicy.deadline(t)).isEqualTo(boundary);
        assertThat(RefreshPolicy.requiresRefresh(t, boundary, Duration.ZERO)).isFalse();
        assertThat(RefreshPolicy.requiresRefresh(t, boundary.plusNanos(1), Duration.ZERO)).isTrue();
    }

    @Test
    void jitter_movesTheRefreshEarlier() {
        // TM-8: both rules subtract the jitter.
        IssuedToken t = token(Duration.ofMinutes(60));
        Instant boundary = START.plus(Duration.ofMinutes(48));
        Duration j = Duration.ofSeconds(9);
        assertThat(RefreshPolicy.requiresRefresh(t, boundary.minus(j), j)).isFalse();
        assertThat(RefreshPolicy.requiresRefresh(t, boundary.minus(j).plusNanos(1), j)).isTrue();
    }

    @Test
    void jitter_staysBelowTenSecondsForLongTokens() {
        // TM-C3: jitter in [0, 10 s).
        RefreshPolicy policy = new RefreshPolicy(RefreshPolicy.DEFAULT_MAX_JITTER, 0, new Random(7));
        IssuedToken t = token(Duration.ofHours(1));
        Duration min = Duration.ofDays(1);
        Duration max = Duration.ZERO;
        for (int i = 0; i < 10_000; i++) {
            Duration j = policy.drawJitter(t);
            min = j.compareTo(min) < 0 ? j : min;
            max = j.compareTo(max) > 0 ? j : max;
        }
        assertThat(min).isGreaterThanOrEqualTo(Duration.ZERO).isLessThan(Duration.ofSeconds(1));
        assertThat(max).isLessThan(Duration.ofSeconds(10)).isGreaterThan(Duration.ofSeconds(9));
    }

    @Test
    void jitter_atMostHalfTheWindowForShortTokens() {
        // A 30 s token refreshes at 24 s; its jitter is below 3 s, so it is never refreshed before 21 s.
        RefreshPolicy policy = new RefreshPolicy(RefreshPolicy.DEFAULT_MAX_JITTER, 0, FixedRandom.highest());
        IssuedToken t = token(Duration.ofSeconds(30));
        assertThat(policy.drawJitter(t)).isEqualTo(Duration.ofMillis(2999));
        assertThat(policy.refreshAt(t)).isEqualTo(START.plusMillis(21_001));
    }

    @Test
    void spread_jitterIsTenPercentOfTheTtl_soRefreshStaysBetween70And80Percent() {
        // A 1 h token refreshes in (42 min, 48 min]: never after the 80 % point (TM-8), spread over 6 min.
        IssuedToken t = token(Duration.ofHours(1));
        RefreshPolicy highest = new RefreshPolicy(RefreshPolicy.DEFAULT_MAX_JITTER, 0.10, FixedRandom.highest());
        RefreshPolicy lowest = new RefreshPolicy(RefreshPolicy.DEFAULT_MAX_JITTER, 0.10, FixedRandom.lowest());
        assertThat(highest.refreshAt(t)).isEqualTo(START.plus(Duration.ofMinutes(42)).plusMillis(1));
        assertThat(lowest.refreshAt(t)).isEqualTo(START.plus(Duration.ofMinutes(48)));
    }

    @Test
    void spread_neverBelowKubeletsTenSeconds_andProportionalToAtMost24h() {
        // 10 min token: 10 % is 60 s; a 60 h token spreads over 10 % of 24 h (2.4 h) before its 24 h deadline.
        RefreshPolicy highest = new RefreshPolicy(RefreshPolicy.DEFAULT_MAX_JITTER, 0.10, FixedRandom.highest());
        assertThat(highest.drawJitter(token(Duration.ofMinutes(10)))).isEqualTo(Duration.ofMillis(59_999));
        assertThat(highest.drawJitter(token(Duration.ofSeconds(60)))).isEqualTo(Duration.ofMillis(5_999));
        assertThat(highest.drawJitter(token(Duration.ofHours(60))))
                .isEqualTo(Duration.ofMinutes(144).minusMillis(1));
    }

    @Test
    void spread_drawsAcrossTheWholeRange() {
        // 10,000 tokens issued at once land in every minute of the 6-minute spread, none after 48 min: each
        // token's draw comes from its text, and tokens differ.
        RefreshPolicy policy = RefreshPolicy.spread();
        int[] perMinute = new int[6];
        for (int i = 0; i < 10_000; i++) {
            IssuedToken t = new IssuedToken("header.claims.signature-" + i, START, START.plus(Duration.ofHours(1)));
            Duration age = Duration.between(START, policy.refreshAt(t));
            assertThat(age).isGreaterThan(Duration.ofMinutes(42)).isLessThanOrEqualTo(Duration.ofMinutes(48));
            perMinute[(int) Math.min(5, age.minusMinutes(42).toMinutes())]++;
        }
        assertThat(java.util.Arrays.stream(perMinute).boxed().toList())
                .allSatisfy(n -> assertThat(n).isBetween(1_400, 1_933));
    }

    @Test
    void spread_givesATokenTheSameRefreshTime_inAnotherProcess() {
        // A token adopted from disk after a restart keeps the refresh time it had when it was minted: a new
        // policy (a new process) draws the same jitter from the same token, and a different token draws another.
        IssuedToken minted = new IssuedToken("header.claims.signature-a", START, START.plus(Duration.ofHours(1)));
        IssuedToken other = new IssuedToken("header.claims.signature-b", START, START.plus(Duration.ofHours(1)));
        Instant before = RefreshPolicy.spread().refreshAt(minted);

        assertThat(RefreshPolicy.spread().refreshAt(minted)).isEqualTo(before);
        assertThat(RefreshPolicy.spread().refreshAt(other)).isNotEqualTo(before);
        assertThat(RefreshPolicy.standard().refreshAt(minted)).isEqualTo(RefreshPolicy.standard().refreshAt(minted));
    }

    @Test
    void fromToken_isAFractionBelowOne() {
        for (int i = 0; i < 1_000; i++) {
            assertThat(RefreshPolicy.fromToken(new IssuedToken("t" + i, START, START.plusSeconds(600))))
                    .isGreaterThanOrEqualTo(0).isLessThan(1);
        }
    }

    @Test
    void draw_outsideZeroToOne_isRejected() {
        RefreshPolicy broken = new RefreshPolicy(RefreshPolicy.DEFAULT_MAX_JITTER, 0, token -> 1.0);
        assertThatThrownBy(() -> broken.refreshAt(token(Duration.ofHours(1))))
                .isInstanceOf(IllegalStateException.class).hasMessageContaining("[0, 1)");
    }

    @Test
    void ttlFraction_outsideZeroToOne_isRejected() {
        assertThatThrownBy(() -> new RefreshPolicy(Duration.ZERO, 1.0, new Random()))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("ttlFraction");
        assertThatThrownBy(() -> new RefreshPolicy(Duration.ZERO, Double.NaN, new Random()))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("ttlFraction");
    }

    @Test
    void jitter_zeroWhenDisabled() {
        RefreshPolicy policy = new RefreshPolicy(Duration.ZERO, 0, new Random());
        IssuedToken t = token(Duration.ofHours(1));
        assertThat(policy.refreshAt(t)).isEqualTo(RefreshPolicy.deadline(t));
    }

    @Test
    void subSecondWindow_forDemoTokensUnderFiveSeconds() {
        // Whole seconds would give a 2 s token no window at all; it refreshes at 1.6 s instead.
        IssuedToken t = token(Duration.ofSeconds(2));
        assertThat(RefreshPolicy.deadline(t)).isEqualTo(START.plusMillis(1600));
    }

    @Test
    void tinyTtl_refreshesWithinItsLifetimeWithoutCrashing() {
        RefreshPolicy policy = RefreshPolicy.standard();
        IssuedToken t = new IssuedToken("t", START, START.plusNanos(1));
        Instant at = policy.refreshAt(t);
        assertThat(at).isBetween(START, t.expiresAt());
    }

    @Test
    void absurdTtl_isCappedByTheMaxAgeRule() {
        RefreshPolicy policy = RefreshPolicy.standard();
        IssuedToken forever = new IssuedToken("t", START, Instant.MAX);
        assertThat(RefreshPolicy.deadline(forever)).isEqualTo(START.plus(RefreshPolicy.MAX_AGE));
        assertThat(policy.refreshAt(forever)).isBetween(
                START.plus(RefreshPolicy.MAX_AGE).minusSeconds(10), START.plus(RefreshPolicy.MAX_AGE));
    }

    @Test
    void issueTimeNearTheEndOfTime_doesNotOverflow() {
        Instant late = Instant.MAX.minusSeconds(60);
        IssuedToken t = new IssuedToken("t", late, late.plusSeconds(30));
        assertThat(RefreshPolicy.standard().refreshAt(t)).isBetween(late, t.expiresAt());
    }

    @Test
    void negativeMaxJitter_isRejected() {
        assertThatThrownBy(() -> new RefreshPolicy(Duration.ofSeconds(-1), 0, new Random()))
                .hasMessageContaining("maxJitter");
    }
}
