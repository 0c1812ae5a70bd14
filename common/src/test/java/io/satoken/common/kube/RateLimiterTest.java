package io.satoken.common.kube;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import org.junit.jupiter.api.Test;

class RateLimiterTest {

    private final FakeBucketTime time = new FakeBucketTime();

    private RateLimiter limiter(double qps, int burst, Duration maxWait) {
        return new RateLimiter(qps, burst, maxWait, time, time);
    }

    @Test
    void burst_isServedWithoutWaiting() throws InterruptedException {
        RateLimiter limiter = limiter(20, 40, Duration.ofSeconds(30));
        for (int i = 0; i < 40; i++) {
            assertThat(limiter.acquire()).isTrue();
        }
        assertThat(time.waits()).isEmpty();
    }

    @Test
    void afterTheBurst_requestsArePacedAtQps() throws InterruptedException {
        RateLimiter limiter = limiter(20, 40, Duration.ofSeconds(30));
        for (int i = 0; i < 40; i++) {
            limiter.acquire();
        }
        for (int i = 0; i < 3; i++) {
            assertThat(limiter.acquire()).isTrue();
        }
        assertThat(time.waits()).containsExactly(Duration.ofMillis(50), Duration.ofMillis(50), Duration.ofMillis(50));
    }

    @Test
    void idleTime_refillsUpToTheBurstOnly() throws InterruptedException {
        RateLimiter limiter = limiter(20, 40, Duration.ofSeconds(30));
        for (int i = 0; i < 40; i++) {
            limiter.acquire();
        }
        time.advance(Duration.ofHours(1));
        for (int i = 0; i < 40; i++) {
            limiter.acquire();
        }
        assertThat(time.waits()).isEmpty();
        limiter.acquire();
        assertThat(time.waits()).containsExactly(Duration.ofMillis(50));
    }

    @Test
    void fractionalQps_spacesRequestsBySeconds() throws InterruptedException {
        RateLimiter limiter = limiter(0.5, 1, Duration.ofSeconds(30));
        limiter.acquire();
        limiter.acquire();
        assertThat(time.waits()).containsExactly(Duration.ofSeconds(2));
    }

    @Test
    void waitLongerThanMaxWait_failsAtOnceAndTakesNothing() throws InterruptedException {
        RateLimiter limiter = limiter(1, 1, Duration.ofMillis(500));
        assertThat(limiter.acquire()).isTrue();
        assertThat(limiter.acquire()).isFalse();
        assertThat(time.waits()).isEmpty();
        // the refused request reserved no slot: one second later the next one is served at once
        time.advance(Duration.ofSeconds(1));
        assertThat(limiter.acquire()).isTrue();
        assertThat(time.waits()).isEmpty();
    }

    @Test
    void zeroMaxWait_neverWaits() throws InterruptedException {
        RateLimiter limiter = limiter(1, 2, Duration.ZERO);
        assertThat(limiter.acquire()).isTrue();
        assertThat(limiter.acquire()).isTrue();
        assertThat(limiter.acquire()).isFalse();
        time.advance(Duration.ofSeconds(1));
        assertThat(limiter.acquire()).isTrue();
        assertThat(time.waits()).isEmpty();
    }

    @Test
    void defaults_are20QpsBurst40() {
        assertThat(RateLimiter.defaults()).hasToString("20.0 qps, burst 40");
    }

    @Test
    void invalidSettings_areRejectedByName() {
        assertThatThrownBy(() -> limiter(0, 1, Duration.ZERO)).hasMessageContaining("qps");
        assertThatThrownBy(() -> limiter(Double.NaN, 1, Duration.ZERO)).hasMessageContaining("qps");
        assertThatThrownBy(() -> limiter(1, 0, Duration.ZERO)).hasMessageContaining("burst");
        assertThatThrownBy(() -> limiter(1, 1, Duration.ofSeconds(-1))).hasMessageContaining("maxWait");
    }
}
