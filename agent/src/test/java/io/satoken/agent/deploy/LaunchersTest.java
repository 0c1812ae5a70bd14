package io.satoken.agent.deploy;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Every launcher the project ships starts its JVM with core dumps off: the core file size limit at 0 and the
 * JVM told not to write one on a crash. A core file of either program would hold tokens (the agent's cache,
 * the control plane's webhook reviews) or keys. Each launcher is run for real, with a stand-in {@code java}
 * that reports the limit it was started with and its arguments.
 */
class LaunchersTest {

    private static final Path ROOT = Repo.root();

    @TempDir
    Path tmp;

    /** A launcher: how to make it runnable here, and the environment that points it at the stand-in java. */
    record Launcher(String name, String path) {
        @Override
        public String toString() {
            return name;
        }
    }

    static Stream<Launcher> launchers() {
        return Stream.of(
                new Launcher("agent/bin/satoken-agent", "agent/bin/satoken-agent"),
                new Launcher("controlplane/bin/satoken-controlplane", "controlplane/bin/satoken-controlplane"),
                // the image's launcher, as images/build-rootfs.sh writes it
                new Launcher("image launcher", null));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("launchers")
    void launcher_startsTheJvmWithCoreDumpsOff(Launcher launcher) throws Exception {
        Path javaHome = Files.createDirectories(tmp.resolve("jdk/bin"));
        Path java = javaHome.resolve("java");
        Files.writeString(java, "#!/bin/sh\necho \"core=$(ulimit -c)\"\necho \"args=$*\"\n");
        Files.setPosixFilePermissions(java, PosixFilePermissions.fromString("rwxr-xr-x"));
        Path jar = Files.writeString(tmp.resolve("program.jar"), "not a jar\n");
        Path script = launcher.path() == null ? imageLauncher() : ROOT.resolve(launcher.path());

        String out = run(List.of("sh", script.toString(), "--version"), Map.of(
                "JAVA", java.toString(), "JAVA_HOME", tmp.resolve("jdk").toString(),
                "SATOKEN_AGENT_JAR", jar.toString(), "SATOKEN_CONTROLPLANE_JAR", jar.toString(),
                "JAVA_OPTS", "-Xmx64m"));

        assertThat(out).contains("core=0");
        // before JAVA_OPTS, so an operator's own options come after it
        assertThat(out.lines().filter(l -> l.startsWith("args=")).findFirst().orElseThrow())
                .startsWith("args=-XX:-CreateCoredumpOnCrash -Xmx64m ").endsWith(" --version");
    }

    private Path imageLauncher() throws Exception {
        Path out = tmp.resolve("rootfs");
        run(List.of("bash", ROOT.resolve("images/build-rootfs.sh").toString(), out.toString(), "satoken-agent",
                "io.satoken.agent.cli.AgentCommand", "--no-runtime"), Map.of());
        return out.resolve("usr/local/bin/satoken-agent");
    }

    private static String run(List<String> command, Map<String, String> env) throws IOException, InterruptedException {
        // the core limit the launcher is started with must not matter: start it with as high a one as allowed
        List<String> raised = new ArrayList<>(List.of("sh", "-c", "ulimit -c unlimited 2>/dev/null; exec \"$@\"", "sh"));
        raised.addAll(command);
        ProcessBuilder builder = new ProcessBuilder(raised).redirectErrorStream(true);
        builder.environment().putAll(env);
        Process process = builder.start();
        String out = new String(process.getInputStream().readAllBytes(), UTF_8);
        assertThat(process.waitFor(30, TimeUnit.SECONDS)).isTrue();
        assertThat(process.exitValue()).as("%s: %s", command, out).isZero();
        return out;
    }
}
