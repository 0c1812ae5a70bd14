package io.satoken.common.text;

import static org.assertj.core.api.Assertions.assertThat;

import io.satoken.common.cli.DurationConverter;
import java.time.Duration;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

class DurationTextTest {

    record Case(String name, Duration duration, String text) {
        @Override
        public String toString() {
            return name;
        }
    }

    static Stream<Case> cases() {
        return Stream.of(
                new Case("zero", Duration.ZERO, "0s"),
                new Case("under a millisecond", Duration.ofNanos(400_000), "0s"),
                new Case("milliseconds", Duration.ofMillis(670), "670ms"),
                new Case("seconds rounded to a tenth", Duration.ofMillis(4_250), "4.3s"),
                new Case("whole seconds without a decimal", Duration.ofSeconds(15), "15s"),
                new Case("a minute with its seconds", Duration.ofSeconds(60), "1m0s"),
                new Case("minutes and seconds, fractions dropped", Duration.ofMillis(95_900), "1m35s"),
                new Case("hours", Duration.ofMinutes(90), "1h30m0s"),
                new Case("days in hours", Duration.ofDays(2).plusSeconds(5), "48h0m5s"),
                new Case("negative", Duration.ofSeconds(-5), "-5s"));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("cases")
    void durations_areWrittenAsKubernetesWritesThem(Case c) {
        assertThat(DurationText.of(c.duration())).isEqualTo(c.text());
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("cases")
    void wholeUnitDurations_readBackToTheSameValue(Case c) {
        if (!c.duration().isNegative() && c.duration().toNanos() % 1_000_000_000 == 0) {
            assertThat(DurationConverter.parse(DurationText.of(c.duration()))).isEqualTo(c.duration());
        }
    }
}
