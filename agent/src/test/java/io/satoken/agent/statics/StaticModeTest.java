package io.satoken.agent.statics;

import static org.assertj.core.api.Assertions.assertThat;

import io.satoken.agent.metrics.AgentMetrics;
import io.satoken.agent.config.AgentConfig;
import io.satoken.agent.config.AgentConfigParser;
import io.satoken.agent.refresh.RefreshScheduler;
import io.satoken.agent.testing.FakeClock;
import io.satoken.agent.testing.RefreshHarness;
import io.satoken.agent.testing.ScriptedTokenSource;
import io.satoken.agent.token.SignatureCheck;
import io.satoken.agent.refresh.TokenAdoption;
import io.satoken.agent.token.TokenCache;
import io.satoken.agent.token.TokenSourceException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.Optional;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Static mode end to end on a fake clock: config file → watcher → directories → files. */
class StaticModeTest {
    @TempDir
    Path tmp;

    private final RefreshHarness refresh = RefreshHarness.standard();
    private final FakeClock clock = refresh.clock();
    private final ScriptedTokenSource source = refresh.source();
    private final TokenCache cache = refresh.cache();
    private final AgentMetrics metrics = new AgentMetrics(clock);
    private final RefreshScheduler scheduler = refresh.scheduler();
    private final StaticTokens statics = new StaticTokens(scheduler,
            new TokenAdoption(cache, Optional.empty(), SignatureCheck.unavailable("a test without keys")), clock);
    private Path configFile;
    private ConfigWatcher watcher;

    @BeforeEach
    void start() throws Exception {
        configFile = tmp.resolve("agent.yaml");
        String yaml = config(projection("exporter", "vault", "exporter"));
        Files.writeString(configFile, yaml);
        AgentConfig config = AgentConfigParser.parse(yaml);
        statics.apply(config.staticDirectories());
        watcher = new ConfigWatcher(configFile, config, yaml.getBytes(StandardCharsets.UTF_8), clock, clock,
                Duration.ofSeconds(2), next -> statics.apply(next.staticDirectories()), metrics);
        watcher.start();
    }

    @AfterEach
    void stop() {
        watcher.close();
        refresh.close();
    }

    @Test
    void configuredProjection_isWrittenWithItsModeInADirectoryOnlyTheAgentMayEnter() throws Exception {
        assertThat(statics.allWritten()).isFalse();
        clock.runDue();
        Path token = tmp.resolve("exporter/token");
        assertThat(Files.readString(token)).isEqualTo("token-1");
        assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(token))).isEqualTo("rw-------");
        // a 0600 file of the agent's own: no one else needs to pass (finding 5: it was 0755)
        assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(tmp.resolve("exporter"))))
                .isEqualTo("rwx------");
        assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(tmp.resolve("exporter").resolve(
                Files.readSymbolicLink(tmp.resolve("exporter/..data")))))).isEqualTo("rwx------");
        assertThat(statics.allWritten()).isTrue();
        assertThat(source.callKeys()).singleElement().satisfies(key -> {
            assertThat(key.audiences()).containsExactly("vault");
            assertThat(key.boundObject().isNone()).isTrue();
        });
    }

    @Test
    void editedConfig_reissuesChangedStartsAddedAndRemovesDropped() throws Exception {
        clock.runDue();
        Files.writeString(configFile, config(projection("exporter", "vault-2", "exporter"),
                projection("backup", "s3", "backup")));
        clock.advance(Duration.ofSeconds(2));
        clock.runDue();
        assertThat(Files.readString(tmp.resolve("exporter/token"))).isEqualTo("token-2");
        assertThat(Files.readString(tmp.resolve("backup/token"))).isEqualTo("token-3");

        Files.writeString(configFile, config(projection("backup", "s3", "backup")));
        clock.advance(Duration.ofSeconds(2));
        assertThat(tmp.resolve("exporter")).doesNotExist();
        assertThat(Files.readString(tmp.resolve("backup/token"))).isEqualTo("token-3");
        assertThat(source.calls()).isEqualTo(3);
        assertThat(metrics.registry().scrape()).contains("satoken_config_reloads_total{result=\"success\"} 2.0");
    }

    @Test
    void invalidEdit_isRejectedAsAWhole_andThePreviousConfigKeepsRunning() throws Exception {
        clock.runDue();
        Files.writeString(configFile, config(projection("exporter", "vault", "exporter"),
                projection("backup", "s3", "backup").replace("expirationSeconds: 3600", "expirationSeconds: 60")));
        clock.advance(Duration.ofSeconds(2));
        clock.advance(Duration.ofSeconds(2)); // the same bad bytes are not reported again
        assertThat(tmp.resolve("backup")).doesNotExist();
        assertThat(watcher.current().projections()).hasSize(1);
        assertThat(metrics.registry().scrape()).contains("satoken_config_reloads_total{result=\"failure\"} 1.0")
                .contains("satoken_projections_invalid_total{source=\"config\"} 1.0");

        clock.advance(Duration.ofMinutes(48)); // the old projection is still refreshed
        assertThat(Files.readString(tmp.resolve("exporter/token"))).isEqualTo("token-2");
    }

    // finding 5: a token on disk that cannot be verified is not adopted, and stays until a new one replaces it
    @Test
    void restart_tokenNotAdopted_andTheApiServerDown_keepsTheOldFileUntilANewTokenReplacesIt() throws Exception {
        clock.runDue();
        Path token = tmp.resolve("exporter/token");
        assertThat(Files.readString(token)).isEqualTo("token-1");
        source.failAlways(new TokenSourceException("connection refused"));

        // the agent restarts without the API server's keys: nothing is adopted, the request fails
        try (RefreshHarness restarted = RefreshHarness.builder().clock(clock).source(source).build()) {
            new StaticTokens(restarted.scheduler(), new TokenAdoption(restarted.cache(), Optional.empty(),
                    SignatureCheck.unavailable("connection refused")), clock)
                    .apply(AgentConfigParser.parse(Files.readString(configFile)).staticDirectories());
            clock.runDue();
            clock.advance(Duration.ofSeconds(5));
            assertThat(source.calls()).isGreaterThan(1);
            assertThat(Files.readString(token)).as("the old token, still in place").isEqualTo("token-1");

            source.recover();
            clock.advance(Duration.ofSeconds(30));
            assertThat(Files.readString(token)).isNotEqualTo("token-1").startsWith("token-");
        }
    }

    @Test
    void modeChange_needsARestart() throws Exception {
        clock.runDue();
        Files.writeString(configFile, "mode: pods\n");
        clock.advance(Duration.ofSeconds(2));
        assertThat(watcher.current().mode()).isEqualTo(AgentConfig.Mode.STATIC);
        assertThat(Files.readString(tmp.resolve("exporter/token"))).isEqualTo("token-1");
    }

    private String config(String... projections) {
        return "mode: static\nprojections:\n" + String.join("", projections);
    }

    private String projection(String sa, String audience, String dir) {
        return "  - namespace: monitoring\n"
                + "    serviceAccount: " + sa + "\n"
                + "    audiences: [" + audience + "]\n"
                + "    expirationSeconds: 3600\n"
                + "    dir: " + tmp.resolve(dir) + "\n";
    }
}
