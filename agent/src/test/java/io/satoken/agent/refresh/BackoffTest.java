package io.satoken.agent.refresh;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.satoken.agent.testing.FixedRandom;
import java.time.Duration;
import java.util.Optional;
import java.util.Random;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;

class BackoffTest {

    private static final Backoff BACKOFF = new Backoff(Duration.ofSeconds(1), Duration.ofSeconds(30), new Random(1));

    @Test
    void base_doublesUpToTheCap() {
        assertThat(IntStream.rangeClosed(1, 8).mapToObj(BACKOFF::base).map(Duration::toSeconds))
                .containsExactly(1L, 2L, 4L, 8L, 16L, 30L, 30L, 30L);
    }

    @Test
    void base_doesNotOverflowAfterManyFailures() {
        assertThat(BACKOFF.base(10_000)).isEqualTo(Duration.ofSeconds(30));
    }

    @Test
    void delay_isBetweenHalfAndAllOfTheBase() {
        for (int failures = 1; failures <= 10; failures++) {
            Duration base = BACKOFF.base(failures);
            for (int i = 0; i < 200; i++) {
                assertThat(BACKOFF.delay(failures, Optional.empty())).isBetween(base.dividedBy(2), base);
            }
        }
    }

    @Test
    void delay_extremesOfTheJitter() {
        Backoff low = new Backoff(Duration.ofSeconds(1), Duration.ofSeconds(30), FixedRandom.lowest());
        Backoff high = new Backoff(Duration.ofSeconds(1), Duration.ofSeconds(30), FixedRandom.highest());
        assertThat(low.delay(3, Optional.empty())).isEqualTo(Duration.ofSeconds(2));
        assertThat(high.delay(3, Optional.empty())).isEqualTo(Duration.ofSeconds(4));
    }

    @Test
    void retryAfter_isAFloor() {
        assertThat(BACKOFF.delay(1, Optional.of(Duration.ofSeconds(20)))).isEqualTo(Duration.ofSeconds(20));
        assertThat(BACKOFF.delay(1, Optional.of(Duration.ofSeconds(120)))).isEqualTo(Duration.ofSeconds(120));
        assertThat(BACKOFF.delay(6, Optional.of(Duration.ofMillis(1)))).isGreaterThanOrEqualTo(Duration.ofSeconds(15));
    }

    @Test
    void invalidSettings_areRejectedByName() {
        assertThatThrownBy(() -> new Backoff(Duration.ZERO, Duration.ofSeconds(1), new Random()))
                .hasMessageContaining("initial");
        assertThatThrownBy(() -> new Backoff(Duration.ofSeconds(2), Duration.ofSeconds(1), new Random()))
                .hasMessageContaining("max");
        assertThatThrownBy(() -> BACKOFF.delay(0, Optional.empty())).hasMessageContaining("failures");
    }
}
