package io.satoken.common.logging;

import static org.assertj.core.api.Assertions.assertThat;

import io.satoken.common.testing.CapturedLogs;
import java.io.IOException;
import java.net.ConnectException;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

class TextLogFormatTest {

    private static final Logger log = LoggerFactory.getLogger("io.satoken.example.Refresher");
    private static final Logger library = LoggerFactory.getLogger("io.kubernetes.client.example.Reflector");
    private static final String TIME = "\\d{4}-\\d\\d-\\d\\dT\\d\\d:\\d\\d:\\d\\d\\.\\d{3}Z";

    @Test
    void line_startsWithIsoUtcTime_thenLevelThreadLoggerAndMessage() {
        try (CapturedLogs logs = CapturedLogs.start(LogLevel.INFO, LogFormat.TEXT)) {
            log.info("started {}", "/run/tokens");
            assertThat(logs.lines()).singleElement().asString()
                    .matches(TIME + " INFO  \\[" + Thread.currentThread().getName() + "] io\\.satoken\\.example\\.Refresher"
                            + " - started /run/tokens");
        }
    }

    @Test
    void exceptionBelowDebug_isOneLineWithItsTypeMessageAndCauses() {
        IOException error = new IOException("request failed", new ConnectException("Failed to connect to /127.0.0.1:6443"));
        try (CapturedLogs logs = CapturedLogs.start(LogLevel.INFO, LogFormat.TEXT)) {
            log.warn("syncing {} failed", "ns/a", error);
            assertThat(logs.lines()).singleElement().asString().endsWith("syncing ns/a failed: java.io.IOException:"
                    + " request failed; caused by: java.net.ConnectException: Failed to connect to /127.0.0.1:6443");
        }
    }

    @Test
    void exceptionAtDebug_isFollowedByItsStackTrace() {
        try (CapturedLogs logs = CapturedLogs.start(LogLevel.DEBUG, LogFormat.TEXT)) {
            log.warn("syncing {} failed", "ns/a", new IOException("request failed"));
            List<String> lines = logs.lines();
            assertThat(lines.get(0)).endsWith("syncing ns/a failed");
            assertThat(lines.get(1)).isEqualTo("java.io.IOException: request failed");
            assertThat(lines.get(2)).startsWith("\tat " + getClass().getName());
        }
    }

    @Test
    void messageThatAlreadySaysTheException_doesNotRepeatIt() {
        IOException error = new IOException("No space left on device");
        try (CapturedLogs logs = CapturedLogs.start(LogLevel.INFO, LogFormat.TEXT)) {
            log.warn("writing /run/t failed: {} (attempt 2); retrying in 2.0s", error.getMessage(), error);
            assertThat(logs.lines()).singleElement().asString()
                    .endsWith("writing /run/t failed: No space left on device (attempt 2); retrying in 2.0s");
        }
    }

    @Test
    void lineBreaksInAMessageOrAnException_becomeSpaces() {
        try (CapturedLogs logs = CapturedLogs.start(LogLevel.INFO, LogFormat.TEXT)) {
            log.warn("body:\n{}", "line 1\r\nline 2", new IllegalStateException("Message: x\nHTTP response code: 0"));
            assertThat(logs.lines()).singleElement().asString()
                    .endsWith("body: line 1 line 2: java.lang.IllegalStateException: Message: x HTTP response code: 0");
        }
    }

    @Test
    void javaUtilLoggingOfLibraries_isWrittenTheSameWay() {
        try (CapturedLogs logs = CapturedLogs.start(LogLevel.INFO, LogFormat.TEXT)) {
            java.util.logging.Logger grpc = java.util.logging.Logger.getLogger("io.grpc.example.Transport");
            grpc.fine("wire detail");
            grpc.warning("stream closed");
            assertThat(logs.lines()).singleElement().asString()
                    .matches(TIME + " WARN  \\[.*] io\\.grpc\\.example\\.Transport - stream closed");
        }
    }

    record Case(String name, LogLevel level, List<String> expected) {
        @Override
        public String toString() {
            return name;
        }
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("levels")
    void level_logsItsOwnAndMoreSevere_librariesNeverBelowInfo(Case c) {
        try (CapturedLogs logs = CapturedLogs.start(c.level(), LogFormat.TEXT)) {
            log.debug("own debug");
            log.info("own info");
            log.warn("own warn");
            log.error("own error");
            library.debug("library debug");
            library.info("library info");
            assertThat(logs.lines()).extracting(l -> l.substring(l.lastIndexOf(" - ") + 3))
                    .containsExactlyElementsOf(c.expected());
        }
    }

    static List<Case> levels() {
        return List.of(
                new Case("error", LogLevel.ERROR, List.of("own error")),
                new Case("warn", LogLevel.WARN, List.of("own warn", "own error")),
                new Case("info", LogLevel.INFO, List.of("own info", "own warn", "own error", "library info")),
                new Case("debug", LogLevel.DEBUG,
                        List.of("own debug", "own info", "own warn", "own error", "library info")));
    }
}
