package io.satoken.common.logging;

import static org.assertj.core.api.Assertions.assertThat;

import com.google.gson.JsonObject;
import com.google.gson.JsonParser;
import io.satoken.common.testing.CapturedLogs;
import java.io.IOException;
import java.net.ConnectException;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

class JsonLogFormatTest {

    private static final Logger log = LoggerFactory.getLogger("io.satoken.example.Refresher");

    @Test
    void everyLine_isOneJsonObjectWithTheStableFields() {
        Instant before = Instant.now().minusMillis(1);
        try (CapturedLogs logs = CapturedLogs.start(LogLevel.INFO, LogFormat.JSON)) {
            log.info("started {}", "/run/tokens");
            JsonObject line = JsonParser.parseString(logs.lines().get(0)).getAsJsonObject();
            assertThat(line.keySet()).containsExactly("time", "level", "logger", "thread", "message");
            assertThat(line.get("time").getAsString()).matches("\\d{4}-\\d\\d-\\d\\dT\\d\\d:\\d\\d:\\d\\d\\.\\d{3}Z");
            assertThat(Instant.parse(line.get("time").getAsString())).isBetween(before, Instant.now().plusMillis(1));
            assertThat(line.get("level").getAsString()).isEqualTo("INFO");
            assertThat(line.get("logger").getAsString()).isEqualTo("io.satoken.example.Refresher");
            assertThat(line.get("thread").getAsString()).isEqualTo(Thread.currentThread().getName());
            assertThat(line.get("message").getAsString()).isEqualTo("started /run/tokens");
        }
    }

    @Test
    void exceptionBelowDebug_isAnErrorFieldWithoutStack() {
        IOException error = new IOException("request failed", new ConnectException("Failed to connect"));
        try (CapturedLogs logs = CapturedLogs.start(LogLevel.INFO, LogFormat.JSON)) {
            log.warn("syncing {} failed", "ns/a", error);
            List<String> lines = logs.lines();
            assertThat(lines).hasSize(1);
            JsonObject line = JsonParser.parseString(lines.get(0)).getAsJsonObject();
            assertThat(line.keySet()).containsExactly("time", "level", "logger", "thread", "message", "error");
            assertThat(line.get("level").getAsString()).isEqualTo("WARN");
            assertThat(line.get("message").getAsString()).isEqualTo("syncing ns/a failed");
            assertThat(line.get("error").getAsString())
                    .isEqualTo("java.io.IOException: request failed; caused by: java.net.ConnectException: Failed to connect");
        }
    }

    @Test
    void exceptionAtDebug_addsItsStackTraceInAStackField() {
        try (CapturedLogs logs = CapturedLogs.start(LogLevel.DEBUG, LogFormat.JSON)) {
            log.warn("syncing {} failed", "ns/a", new IOException("request failed"));
            List<String> lines = logs.lines();
            assertThat(lines).hasSize(1);
            JsonObject line = JsonParser.parseString(lines.get(0)).getAsJsonObject();
            assertThat(line.keySet()).containsExactly("time", "level", "logger", "thread", "message", "error", "stack");
            assertThat(line.get("stack").getAsString()).startsWith("java.io.IOException: request failed\n\tat "
                    + getClass().getName());
        }
    }

    @Test
    void quotesBackslashesAndLineBreaks_areEscapedWithinOneLine() {
        String awkward = "say \"hi\"\\ \n\tthen\r\n\u0001 leave";
        try (CapturedLogs logs = CapturedLogs.start(LogLevel.INFO, LogFormat.JSON)) {
            log.info(awkward);
            List<String> lines = logs.lines();
            assertThat(lines).hasSize(1);
            assertThat(JsonParser.parseString(lines.get(0)).getAsJsonObject().get("message").getAsString())
                    .isEqualTo(awkward);
        }
    }

    @Test
    void slashes_areNotEscaped() {
        try (CapturedLogs logs = CapturedLogs.start(LogLevel.INFO, LogFormat.JSON)) {
            log.info("API server https://10.0.0.1:6443, tokens in /run/satoken");
            assertThat(logs.text()).contains("\"message\":\"API server https://10.0.0.1:6443, tokens in /run/satoken\"");
        }
    }

    @Test
    void time_isUtcWithMilliseconds() {
        assertThat(JsonLineLayout.TIME.format(Instant.parse("2026-11-24T08:15:30Z").plus(Duration.ofNanos(7_000_000))))
                .isEqualTo("2026-11-24T08:15:30.007Z");
    }
}
