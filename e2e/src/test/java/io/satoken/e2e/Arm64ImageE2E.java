package io.satoken.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import io.satoken.common.cli.BuildVersion;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.yaml.snakeyaml.LoaderOptions;
import org.yaml.snakeyaml.Yaml;
import org.yaml.snakeyaml.constructor.SafeConstructor;

/**
 * The linux/arm64 images run: their files, unpacked from the archive by following its image index, start
 * both programs under qemu's user-mode emulator, which needs neither an arm64 machine nor binfmt_misc.
 *
 * <p>{@code qemu-aarch64-static -L ROOT} runs the image's java with ROOT as the prefix of the absolute paths
 * the program opens when they exist there: the loader, the libraries and the runtime's modules come from the
 * image; a path only the host has (the config) is the host's. The launcher script cannot run so (dash would
 * exec an arm64 program, which needs binfmt): the test runs the java command it runs, with one change. The
 * class path is the image's {@code /app/jib-classpath-file} with ROOT before each entry, because the prefix
 * does not reach every call the JDK makes to open a jar: with {@code -cp @/app/jib-classpath-file} qemu 7.2
 * finds {@code /app/classes} but none of the jars under {@code /app/libs}.
 */
class Arm64ImageE2E {

    private static final List<String> PROGRAMS = List.of("satoken-agent", "satoken-controlplane");
    // a JVM emulated instruction by instruction on a shared machine: tens of seconds each, so a wide margin
    private static final Duration TIMEOUT = Duration.ofMinutes(6);

    @Test
    void bothPrograms_printTheirVersion_onArm64(@TempDir Path dir) throws Exception {
        for (String program : PROGRAMS) {
            Path root = arm64Root(program, dir);
            Commands.Result result = Commands.run("arm64-" + program + "-version", java(root, program, "--version"),
                    TIMEOUT);
            assertThat(result.exit()).as(program + ": " + result.output()).isZero();
            assertThat(result.output()).as(program).contains(BuildVersion.current().version());
        }
    }

    @Test
    void agent_validatesTheShippedConfig_onArm64(@TempDir Path dir) throws Exception {
        Path root = arm64Root("satoken-agent", dir);
        Yaml yaml = new Yaml(new SafeConstructor(new LoaderOptions()));
        Map<?, ?> configMap = yaml.load(Files.readString(E2E.repo().resolve("agent/deploy/20-configmap.yaml")));
        // outside the image root: qemu opens it from the host, as the agent is told
        Path config = Files.writeString(dir.resolve("agent.yaml"),
                String.valueOf(((Map<?, ?>) configMap.get("data")).get("agent.yaml")));

        Commands.Result result = Commands.run("arm64-satoken-agent-validate",
                // the node's name, which the DaemonSet gives it in NODE_NAME
                java(root, "satoken-agent", "validate", "--config", config.toString(), "--node-name", "arm64-node"),
                TIMEOUT);

        assertThat(result.exit()).as(result.output()).isZero();
        assertThat(result.output()).contains("OK: " + config + ": mode csi", "CSI node arm64-node");
    }

    /** The files of {@code program}'s arm64 image, unpacked under {@code dir}; skips loudly without what it needs. */
    private static Path arm64Root(String program, Path dir) throws Exception {
        Path archive = ImageArchive.of(program);
        skipUnless(Files.isRegularFile(archive), "the image archives (mvn -B -q -DskipTests -Pimages package)");
        skipUnless(Commands.onPath("qemu-aarch64-static"),
                "qemu-aarch64-static (Debian: apt-get install qemu-user-static; .ci/run installs it)");
        ImageArchive unpacked = ImageArchive.unpack(archive, dir.resolve(program + "-archive"));
        ImageArchive.Platform arm64 = unpacked.platform("arm64");
        assertThat(arm64.config().get("architecture")).isEqualTo("arm64");
        return unpacked.unpackLayers(arm64, dir.resolve(program + "-arm64"));
    }

    /** The launcher's java command for {@code program} (its main class read from the launcher), under qemu. */
    private static List<String> java(Path root, String program, String... args) throws Exception {
        String launcher = Files.readString(root.resolve("usr/local/bin/" + program));
        Matcher main = Pattern.compile("-cp @/app/jib-classpath-file (\\S+)").matcher(launcher);
        assertThat(main.find()).as("the launcher's java command: " + launcher).isTrue();
        String classPath = Arrays.stream(Files.readString(root.resolve("app/jib-classpath-file")).strip().split(":"))
                .map(entry -> root + entry).collect(Collectors.joining(":"));
        List<String> command = new ArrayList<>(List.of("qemu-aarch64-static", "-L", root.toString(),
                root.resolve("opt/java/openjdk/bin/java").toString(),
                "-XX:-CreateCoredumpOnCrash",
                // the C1 compiler only, no class data sharing: a shorter start under emulation
                "-XX:TieredStopAtLevel=1", "-Xshare:off",
                "-cp", classPath, main.group(1)));
        command.addAll(List.of(args));
        return command;
    }

    private static void skipUnless(boolean present, String what) {
        if (!present) {
            String test = StackWalker.getInstance().walk(s -> s.skip(2).findFirst().orElseThrow().getMethodName());
            System.err.println("*** SKIPPED Arm64ImageE2E." + test + ": needs " + what + " ***");
            Assumptions.assumeTrue(false, "needs " + what);
        }
    }
}
