package io.satoken.agent.refresh;

import static org.assertj.core.api.Assertions.assertThat;

import com.google.common.jimfs.Configuration;
import com.google.common.jimfs.Jimfs;
import io.satoken.agent.projection.Projection;
import io.satoken.agent.projection.TokenDirectory;
import io.satoken.agent.testing.FakeClock;
import io.satoken.agent.testing.RefreshHarness;
import io.satoken.agent.testing.ScriptedTokenSource;
import io.satoken.agent.token.BoundObjectRef;
import io.satoken.agent.token.TokenKey;
import io.satoken.agent.token.TokenSourceException;
import io.satoken.common.logging.LogFormat;
import io.satoken.common.logging.LogLevel;
import io.satoken.common.testing.CapturedLogs;
import java.io.IOException;
import java.net.ConnectException;
import java.nio.file.FileSystem;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * An API outage costs one log line per failed attempt, with the reason and no stack trace, unless
 * {@code --log-level debug} asks for the stack trace.
 */
class RefreshFailureLogTest {

    private static final TokenKey VAULT = new TokenKey("ns", "app", List.of("vault"), 3600, BoundObjectRef.NONE);
    private static final String REFUSED = "Failed to connect to /127.0.0.1:6443";

    private final RefreshHarness refresh = RefreshHarness.standard();
    private final FakeClock clock = refresh.clock();
    private final ScriptedTokenSource source = refresh.source();
    private final FileSystem fs = Jimfs.newFileSystem(Configuration.unix().toBuilder()
            .setAttributeViews("basic", "owner", "posix", "unix").build());

    @AfterEach
    void close() throws IOException {
        refresh.close();
        fs.close();
    }

    @Test
    void failedFetch_atInfo_isOneLineWithTheReasonAndNoStackTrace() throws Exception {
        source.failAlways(outage());
        try (CapturedLogs logs = CapturedLogs.start(LogLevel.INFO, LogFormat.TEXT)) {
            put();
            clock.runDue();
            clock.advance(Duration.ofSeconds(1));
            clock.advance(Duration.ofSeconds(2));

            List<String> lines = logs.lines();
            assertThat(lines).hasSize(3).allSatisfy(line -> assertThat(line)
                    .contains(" WARN ", "failed to fetch token " + VAULT, REFUSED).doesNotContain("\tat "));
            assertThat(lines.get(0)).contains("(attempt 1); retrying in 1s");
            assertThat(lines.get(2)).contains("(attempt 3); retrying in 4s");
        }
    }

    @Test
    void failedRefresh_whileServingTheCachedToken_isOneLinePerAttempt() throws Exception {
        put();
        clock.runDue();
        source.failAlways(outage());
        try (CapturedLogs logs = CapturedLogs.start(LogLevel.INFO, LogFormat.TEXT)) {
            clock.advance(Duration.ofMinutes(48)); // the refresh fails
            clock.advance(Duration.ofSeconds(1)); // and its first retry

            assertThat(logs.lines()).hasSize(2).allSatisfy(line -> assertThat(line)
                    .contains("refresh of token " + VAULT + " failed", REFUSED,
                            "serving the cached token, valid until 2026-01-01T01:00:00Z")
                    .doesNotContain("\tat "));
        }
    }

    @Test
    void failedFetch_atDebug_isFollowedByTheStackTrace() throws Exception {
        source.failAlways(outage());
        try (CapturedLogs logs = CapturedLogs.start(LogLevel.DEBUG, LogFormat.TEXT)) {
            put();
            clock.runDue();

            List<String> lines = logs.lines();
            int retry = lines.indexOf(lines.stream().filter(l -> l.contains("(attempt 1); retrying in 1s"))
                    .findFirst().orElseThrow());
            assertThat(lines.get(retry + 1)).startsWith(TokenSourceException.class.getName() + ": ");
            assertThat(lines.get(retry + 2)).startsWith("\tat ");
            assertThat(lines).anySatisfy(l -> assertThat(l).isEqualTo("Caused by: java.net.ConnectException: " + REFUSED));
        }
    }

    @Test
    void failedFetch_inJson_isOneObjectWithAnErrorField() throws Exception {
        source.failAlways(outage());
        try (CapturedLogs logs = CapturedLogs.start(LogLevel.INFO, LogFormat.JSON)) {
            put();
            clock.runDue();

            assertThat(logs.lines()).singleElement().asString()
                    .contains("\"level\":\"WARN\"", "(attempt 1); retrying in 1s",
                            "\"error\":\"" + TokenSourceException.class.getName() + ": ")
                    .doesNotContain("\"stack\"");
        }
    }

    private static TokenSourceException outage() {
        return new TokenSourceException("TokenRequest failed: " + REFUSED, null, false, new ConnectException(REFUSED));
    }

    private void put() throws IOException {
        Path dir = Files.createDirectories(fs.getPath("/var/lib/satoken/a"));
        refresh.scheduler().put(new TokenDirectory("a", dir, List.of(new Projection(VAULT, "token", 0600, null, null))));
    }
}
