package io.satoken.agent.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;
import picocli.CommandLine;

class DurationConverterTest {

    @ParameterizedTest(name = "{0}")
    @CsvSource({"500ms,500", "30s,30000", "2m,120000", "1h,3600000", "1h30m,5400000", "1m500ms,60500", "0s,0"})
    void parse_kubernetesStyleDurations(String text, long millis) {
        assertThat(DurationConverter.parse(text)).isEqualTo(Duration.ofMillis(millis));
    }

    @ParameterizedTest(name = "\"{0}\"")
    @ValueSource(strings = {"", "30", "ten", "30 s", "s30", "1h 30m", "-5s", "1.5s", "30sx"})
    void parse_rejectsAnythingElseNamingTheValue(String text) {
        assertThatThrownBy(() -> DurationConverter.parse(text))
                .isInstanceOf(CommandLine.TypeConversionException.class)
                .hasMessageContaining("invalid duration '" + text + "'");
    }
}
