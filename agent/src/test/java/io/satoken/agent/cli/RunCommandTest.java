package io.satoken.agent.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@code satoken-agent run} refuses to start, with exit 2 and one clear line per error, on bad flags or config. */
class RunCommandTest {

    @TempDir
    Path dir;

    private record Result(int exit, String out, String err) {}

    @Test
    void invalidConfigAtStartup_exits2NamingTheField() throws Exception {
        Path config = Files.writeString(dir.resolve("agent.yaml"), """
                mode: static
                projections:
                  - namespace: monitoring
                    serviceAccount: exporter
                    expirationSeconds: 60
                    dir: relative/dir
                """);
        Result r = run("run", "--config", config.toString());
        assertThat(r.exit()).isEqualTo(2);
        // every error at once, one per line
        assertThat(r.err().lines()).satisfiesExactly(
                line -> assertThat(line).startsWith("satoken-agent run: --config " + config + ": "
                        + "projections[0].expirationSeconds: "),
                line -> assertThat(line).startsWith("satoken-agent run: --config " + config + ": projections[0].dir: "));
    }

    @Test
    void flagAndConfigErrors_allReportedAtOnce() throws Exception {
        Path config = Files.writeString(dir.resolve("agent.yaml"), "mode: csi\nkubeletDir: relative\n");
        Result r = run("run", "--config", config.toString(), "--node-name", "", "--metrics-address", "9810",
                "--qps", "0");
        assertThat(r.exit()).isEqualTo(2);
        assertThat(r.err().lines()).containsExactly(
                "satoken-agent run: --metrics-address: expected HOST:PORT, got \"9810\"",
                "satoken-agent run: --qps must be > 0 and --burst >= 1, got qps=0.0 burst=40",
                "satoken-agent run: --config " + config + ": kubeletDir: must be an absolute path, got \"relative\"");
    }

    @Test
    void missingConfigFile_exits2() {
        Result r = run("run", "--config", dir.resolve("absent.yaml").toString());
        assertThat(r.exit()).isEqualTo(2);
        assertThat(r.err()).contains("--config " + dir.resolve("absent.yaml") + ": not found");
    }

    @Test
    void csiModeWithoutANodeName_exits2() throws Exception {
        Path config = Files.writeString(dir.resolve("agent.yaml"), "mode: csi\n");
        Result r = run("run", "--config", config.toString(), "--node-name", "");
        assertThat(r.exit()).isEqualTo(2);
        assertThat(r.err()).contains("CSI mode", "--node-name", "NODE_NAME");
    }

    @Test
    void removedPodMode_exits2NamingCsiMode() throws Exception {
        // the hostPath delivery is gone; an old DaemonSet config must say what replaced it, not start
        Path config = Files.writeString(dir.resolve("agent.yaml"), "mode: pods\nrootDir: /var/lib/satoken\n");
        Result r = run("run", "--config", config.toString(), "--node-name", "node-a");
        assertThat(r.exit()).isEqualTo(2);
        assertThat(r.err()).startsWith("satoken-agent run: --config " + config + ": ")
                .contains("mode: \"pods\" (hostPath delivery) was removed: use \"csi\"", "tokens.satoken.io",
                        "rootDir: no longer exists");
        assertThat(r.err().lines()).hasSize(2).allMatch(line -> line.startsWith("satoken-agent run: --config "));
    }

    @Test
    void badMetricsAddressOrRateLimit_exits2() throws Exception {
        Path config = Files.writeString(dir.resolve("agent.yaml"), "mode: csi\n");
        assertThat(run("run", "--config", config.toString(), "--metrics-address", "9810").err())
                .contains("--metrics-address: expected HOST:PORT");
        Result r = run("run", "--config", config.toString(), "--qps", "0");
        assertThat(r.exit()).isEqualTo(2);
        assertThat(r.err()).contains("--qps must be > 0");
    }

    @Test
    void configFlag_isRequired() {
        Result r = run("run");
        assertThat(r.exit()).isEqualTo(2);
        assertThat(r.err()).contains("--config");
    }

    @Test
    void help_showsTheSharedClientAndMetricsFlagsWithThisProgramsDefault() {
        for (String command : new String[] {"run", "validate"}) {
            Result r = run(command, "--help");
            assertThat(r.exit()).isZero();
            assertThat(r.out()).contains("--kubeconfig=FILE", "--metrics-address=HOST:PORT", "(default: 127.0.0.1:9810)");
        }
    }

    private static Result run(String... args) {
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        int exit = AgentCommand.execute(new PrintWriter(out, true), new PrintWriter(err, true), args);
        return new Result(exit, out.toString(), err.toString());
    }
}
