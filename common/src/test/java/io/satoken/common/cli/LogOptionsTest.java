package io.satoken.common.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.satoken.common.logging.LogFormat;
import io.satoken.common.logging.LogLevel;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;
import picocli.CommandLine;
import picocli.CommandLine.Command;

class LogOptionsTest {

    @Command(name = "run")
    static final class Run {
        @CommandLine.Mixin
        LogOptions logs;
    }

    record Case(String name, List<String> args, LogLevel level, LogFormat format) {
        @Override
        public String toString() {
            return name;
        }
    }

    static List<Case> flags() {
        return List.of(
                new Case("defaults", List.of(), LogLevel.INFO, LogFormat.TEXT),
                new Case("debug json", List.of("--log-level", "debug", "--log-format", "json"), LogLevel.DEBUG, LogFormat.JSON),
                new Case("with =", List.of("--log-level=warn", "--log-format=text"), LogLevel.WARN, LogFormat.TEXT),
                new Case("error", List.of("--log-level", "error"), LogLevel.ERROR, LogFormat.TEXT),
                new Case("upper case", List.of("--log-level", "DEBUG", "--log-format", "JSON"), LogLevel.DEBUG, LogFormat.JSON));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("flags")
    void flags_parse(Case c) {
        Run run = new Run();
        new CommandLine(run).parseArgs(c.args().toArray(String[]::new));
        assertThat(run.logs.level()).isEqualTo(c.level());
        assertThat(run.logs.format()).isEqualTo(c.format());
    }

    @Test
    void unknownLevel_isAUsageErrorNamingTheFlagAndTheChoices() {
        assertThatThrownBy(() -> new CommandLine(new Run()).parseArgs("--log-level", "trace"))
                .isInstanceOf(CommandLine.ParameterException.class)
                .hasMessageContaining("--log-level")
                .hasMessageContaining("expected one of error, warn, info, debug, got \"trace\"");
    }

    @Test
    void unknownFormat_isAUsageErrorNamingTheFlagAndTheChoices() {
        assertThatThrownBy(() -> new CommandLine(new Run()).parseArgs("--log-format", "logfmt"))
                .isInstanceOf(CommandLine.ParameterException.class)
                .hasMessageContaining("--log-format")
                .hasMessageContaining("expected one of text, json, got \"logfmt\"");
    }
}
