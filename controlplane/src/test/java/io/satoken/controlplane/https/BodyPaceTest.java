package io.satoken.controlplane.https;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;
import org.junit.jupiter.api.Test;

/** The pace a body must keep: the production one (64 KiB/s, 1 s grace, 10 s deadline) at chosen moments. */
class BodyPaceTest {

    static final BodyPace PACE = WebhookServer.Limits.forHeap(384L << 20).pace();
    static final long KIB = 1024;
    static final long MIB = 1024 * KIB;

    record Case(String name, long claimed, long received, Duration elapsed, boolean behind) {
        @Override
        public String toString() {
            return name;
        }
    }

    static Stream<Case> behind() {
        return Stream.of(
                new Case("nothing yet, within the grace", 7 * MIB, 0, Duration.ofMillis(1000), false),
                new Case("nothing, just past the grace", 7 * MIB, 0, Duration.ofMillis(1001), true),
                new Case("a small body keeps 64 KiB/s: 63 KiB after 2 s is behind", 100 * KIB, 63 * KIB,
                        Duration.ofSeconds(2), true),
                new Case("a small body keeps 64 KiB/s: 64 KiB after 2 s is on time", 100 * KIB, 64 * KIB,
                        Duration.ofSeconds(2), false),
                new Case("a small body all in: never behind", 100 * KIB, 100 * KIB, Duration.ofSeconds(9), false),
                new Case("7 MiB must make the deadline: 700 KiB after 2 s is behind", 7 * MIB, 700 * KIB,
                        Duration.ofSeconds(2), true),
                new Case("7 MiB must make the deadline: 800 KiB after 2 s is on time", 7 * MIB, 800 * KIB,
                        Duration.ofSeconds(2), false),
                new Case("7 MiB at 64 KiB/s, the slowest pace a small body may keep, is behind", 7 * MIB, 320 * KIB,
                        Duration.ofSeconds(6), true));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource
    void behind(Case c) {
        assertThat(PACE.behind(c.claimed(), c.received(), c.elapsed())).isEqualTo(c.behind());
    }

    @Test
    void bytesPerSecond_theFloorOrWhatMakesTheDeadline() {
        assertThat(PACE.bytesPerSecond(100 * KIB)).isEqualTo(64 * KIB);
        // 7 MiB over the 9 s between the grace and the deadline
        assertThat(PACE.bytesPerSecond(7 * MIB)).isEqualTo((7 * MIB + 8) / 9);
    }

    @Test
    void message_namesWhatArrived_andThePaceItMissed() {
        assertThat(PACE.message(7 * MIB, 1000, Duration.ofMillis(1250))).isEqualTo("the request body arrived too "
                + "slowly: 1000 of 7340032 bytes in 1250ms; after its first 1000ms a body must arrive at 815560 "
                + "bytes/s or faster (at least 65536, and enough to arrive whole within 10000ms)");
    }

    @Test
    void pace_withAGraceAsLongAsTheDeadline_refused() {
        assertThatThrownBy(() -> new BodyPace(1, Duration.ofSeconds(10), Duration.ofSeconds(10)))
                .isInstanceOf(IllegalArgumentException.class);
    }
}
