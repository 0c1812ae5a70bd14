package io.satoken.common.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;
import picocli.CommandLine;

/**
 * The one duration grammar of both programs: the agent's former cases (several parts) and the control plane's
 * (one part), and the union that the control plane now accepts too.
 */
class DurationConverterTest {

    @ParameterizedTest(name = "{0}")
    @CsvSource({
            // the agent's former cases
            "500ms,500", "30s,30000", "2m,120000", "1h,3600000", "1h30m,5400000", "1m500ms,60500", "0s,0",
            // the control plane's former cases: its flags' defaults and its help's examples
            "15s,15000", "10s,10000", "2s,2000",
            // the union: several parts, any order, a unit repeated, as the agent took them
            "2h45m30s,9930000", "1h500ms,3600500", "30s1m,90000", "1m1m,120000", "01s,1000"})
    void parse_kubernetesStyleDurations(String text, long millis) {
        assertThat(DurationConverter.parse(text)).isEqualTo(Duration.ofMillis(millis));
    }

    @ParameterizedTest(name = "{0}")
    @CsvSource({"15s,15000", "1h30m,5400000"})
    void convert_isParse(String text, long millis) {
        assertThat(new DurationConverter().convert(text)).isEqualTo(Duration.ofMillis(millis));
    }

    @ParameterizedTest(name = "\"{0}\"")
    @ValueSource(strings = {"", "30", "ten", "30 s", "s30", "1h 30m", "-5s", "1.5s", "30sx", "soon", "15S", "1d",
            "1h30", " 1h", "1h-30m", "+5s"})
    void parse_rejectsAnythingElseNamingTheValue(String text) {
        assertThatThrownBy(() -> DurationConverter.parse(text))
                .isInstanceOf(CommandLine.TypeConversionException.class)
                .hasMessageContaining("invalid duration '" + text + "'")
                .hasMessageContaining("expected a duration like 15s"); // the control plane's former wording
    }
}
