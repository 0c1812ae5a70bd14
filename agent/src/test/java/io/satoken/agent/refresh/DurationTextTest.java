package io.satoken.agent.refresh;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import org.junit.jupiter.api.Test;

class DurationTextTest {

    @Test
    void retryDelays_areLoggedAsTheFlagsWriteDurations() {
        assertThat(DurationText.of(Duration.ofMillis(670))).isEqualTo("670ms");
        assertThat(DurationText.of(Duration.ofMillis(4_250))).isEqualTo("4.3s");
        assertThat(DurationText.of(Duration.ofSeconds(60))).isEqualTo("1m0s");
        assertThat(DurationText.of(Duration.ofSeconds(95))).isEqualTo("1m35s");
    }
}
