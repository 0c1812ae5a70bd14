package io.satoken.agent.deploy;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.BasicFileAttributes;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/** Runs {@code systemd/install.sh} for real, staged into a temp dir with {@code --destdir}. */
class InstallScriptTest {

    private static final Path ROOT = Repo.root();
    private static final Path SCRIPT = ROOT.resolve("systemd/install.sh");

    @TempDir
    Path tmp;
    private Path destdir;
    private Path jar;

    record Run(int exit, String output) { }

    /** A file install.sh puts in place, and the mode it must have. */
    record Installed(String name, String path, String mode) {
        @Override
        public String toString() {
            return name;
        }
    }

    static Stream<Installed> installedFiles() {
        return Stream.of(
                new Installed("jar", "usr/local/lib/satoken/satoken-agent.jar", "rw-r--r--"),
                new Installed("launcher", "usr/local/bin/satoken-agent", "rwxr-xr-x"),
                new Installed("unit", "etc/systemd/system/satoken-agent.service", "rw-r--r--"),
                new Installed("config", "etc/satoken/agent.yaml", "rw-r-----"));
    }

    @BeforeEach
    void makeJar() throws IOException {
        destdir = tmp.resolve("root");
        jar = Files.writeString(tmp.resolve("satoken-agent.jar"), "not really a jar\n");
    }

    @ParameterizedTest
    @MethodSource("installedFiles")
    void install_putsEachFileInPlaceWithItsMode(Installed file) throws Exception {
        Run r = install();

        assertThat(r.exit).as(r.output).isZero();
        Path path = destdir.resolve(file.path);
        assertThat(path).isRegularFile();
        assertThat(mode(path)).isEqualTo(file.mode);
    }

    @Test
    void install_copiesTheJarAndTheExampleConfig() throws Exception {
        install();

        assertThat(destdir.resolve("usr/local/lib/satoken/satoken-agent.jar")).hasSameBinaryContentAs(jar);
        assertThat(destdir.resolve("etc/satoken/agent.yaml")).hasSameTextualContentAs(ROOT.resolve("systemd/agent.yaml"));
        assertThat(destdir.resolve("etc/systemd/system/satoken-agent.service"))
                .hasSameTextualContentAs(ROOT.resolve("systemd/satoken-agent.service"));
    }

    @Test
    void install_pointsTheLauncherAtTheInstalledJar() throws Exception {
        install();

        List<String> source = Files.readAllLines(ROOT.resolve("agent/bin/satoken-agent"));
        List<String> installed = Files.readAllLines(destdir.resolve("usr/local/bin/satoken-agent"));
        assertThat(installed).contains("jar=${SATOKEN_AGENT_JAR:-/usr/local/lib/satoken/satoken-agent.jar}");
        // only that line differs
        assertThat(installed).hasSameSizeAs(source);
        List<String> changed = new ArrayList<>(installed);
        changed.removeAll(source);
        assertThat(changed).hasSize(1);
    }

    @Test
    void install_withAnotherPrefix_rewritesTheUnitsPaths() throws Exception {
        Run r = run("--destdir", destdir.toString(), "--prefix", "/opt/satoken", "--jar", jar.toString());

        assertThat(r.exit).as(r.output).isZero();
        assertThat(destdir.resolve("opt/satoken/lib/satoken/satoken-agent.jar")).isRegularFile();
        assertThat(destdir.resolve("opt/satoken/bin/satoken-agent")).content(UTF_8)
                .contains("jar=${SATOKEN_AGENT_JAR:-/opt/satoken/lib/satoken/satoken-agent.jar}");
        assertThat(destdir.resolve("etc/systemd/system/satoken-agent.service")).content(UTF_8)
                .contains("ExecStart=/opt/satoken/bin/satoken-agent run --config /etc/satoken/agent.yaml")
                .contains("Environment=SATOKEN_AGENT_JAR=/opt/satoken/lib/satoken/satoken-agent.jar")
                .doesNotContain("/usr/local/");
    }

    @Test
    void install_takesDestdirAndUnitDirFromTheEnvironment() throws Exception {
        Run r = runWith(Map.of("DESTDIR", destdir.toString(), "SYSTEMD_UNIT_DIR", "/usr/lib/systemd/system"),
                "--jar", jar.toString());

        assertThat(r.exit).as(r.output).isZero();
        assertThat(destdir.resolve("usr/lib/systemd/system/satoken-agent.service")).isRegularFile();
        assertThat(destdir.resolve("etc/systemd/system")).doesNotExist();
    }

    @Test
    void install_intoADestdir_makesNoUser() throws Exception {
        Run r = install();

        assertThat(r.output).contains("not making the satoken user (staging into " + destdir + ")");
    }

    @Test
    void install_twice_succeedsAndKeepsAnEditedConfig() throws Exception {
        install();
        Path config = destdir.resolve("etc/satoken/agent.yaml");
        Files.writeString(config, "mode: static\nprojections: []\n");

        Run again = install();

        assertThat(again.exit).as(again.output).isZero();
        assertThat(config).hasContent("mode: static\nprojections: []");
        assertThat(again.output).contains("kept " + config);
    }

    @Test
    void install_again_replacesTheJarByRenameSoARunningAgentKeepsItsOwn() throws Exception {
        install();
        Path installed = destdir.resolve("usr/local/lib/satoken/satoken-agent.jar");
        Object before = Files.readAttributes(installed, BasicFileAttributes.class).fileKey();
        Files.writeString(jar, "a newer jar\n");

        install();

        assertThat(installed).hasContent("a newer jar");
        assertThat(Files.readAttributes(installed, BasicFileAttributes.class).fileKey()).isNotEqualTo(before);
    }

    @Test
    void uninstall_removesWhatItInstalledButKeepsTheConfigAndTokens() throws Exception {
        install();
        Path token = Files.createDirectories(destdir.resolve("var/lib/satoken/pods/uid-1"));

        Run r = run("--destdir", destdir.toString(), "--uninstall");

        assertThat(r.exit).as(r.output).isZero();
        assertThat(destdir.resolve("usr/local/lib/satoken")).doesNotExist();
        assertThat(destdir.resolve("usr/local/bin/satoken-agent")).doesNotExist();
        assertThat(destdir.resolve("etc/systemd/system/satoken-agent.service")).doesNotExist();
        assertThat(destdir.resolve("etc/satoken/agent.yaml")).isRegularFile();
        assertThat(token).isDirectory();
    }

    @Test
    void uninstall_purge_removesTheConfigAndTokenDirsToo() throws Exception {
        install();
        Files.createDirectories(destdir.resolve("var/lib/satoken/pods/uid-1"));
        Files.createDirectories(destdir.resolve("run/satoken/node-exporter"));

        Run r = run("--destdir", destdir.toString(), "--uninstall", "--purge");

        assertThat(r.exit).as(r.output).isZero();
        assertThat(destdir.resolve("etc/satoken")).doesNotExist();
        assertThat(destdir.resolve("var/lib/satoken")).doesNotExist();
        assertThat(destdir.resolve("run/satoken")).doesNotExist();
    }

    @Test
    void uninstall_whenNothingIsInstalled_succeeds() throws Exception {
        Run r = run("--destdir", destdir.toString(), "--uninstall");

        assertThat(r.exit).as(r.output).isZero();
    }

    @Test
    void install_withoutTheJar_exits2AndSaysHowToBuildIt() throws Exception {
        Run r = run("--destdir", destdir.toString(), "--jar", tmp.resolve("missing.jar").toString());

        assertThat(r.exit).isEqualTo(2);
        assertThat(r.output).contains("missing.jar not found").contains("mvn");
        assertThat(destdir).doesNotExist();
    }

    @Test
    void badArguments_exit2() throws Exception {
        assertThat(run("--bogus").exit).isEqualTo(2);
        assertThat(run("--purge").exit).isEqualTo(2);
        assertThat(run("--prefix", "usr/local", "--destdir", destdir.toString()).exit).isEqualTo(2);
        assertThat(run("--prefix").exit).isEqualTo(2);
    }

    /** Files of a node that the agent, reading past modes with CAP_DAC_READ_SEARCH, must never see. */
    static final List<String> NODE_SECRETS = List.of("/etc/shadow", "/etc/gshadow", "/etc/ssh/ssh_host_ed25519_key",
            "/etc/ssl/private/ssl-cert-snakeoil.key", "/etc/pki/tls/private/localhost.key",
            "/etc/kubernetes/pki/sa.key", "/etc/kubernetes/admin.conf", "/etc/kubernetes/kubelet.conf",
            "/var/lib/kubelet/pki/kubelet-client-current.pem", "/var/lib/kubelet/pods", "/var/lib/etcd/member",
            "/var/lib/containerd", "/var/lib/cloud/instance/user-data.txt", "/var/lib/waagent/ovf-env.xml",
            "/var/backups/shadow.bak", "/run/containerd/containerd.sock", "/run/secrets");

    /**
     * The agent reads past file modes (CAP_DAC_READ_SEARCH, to read back the tokens it gave to other users), so
     * /etc, /var and /run are empty to it but for an allow-list: its config, what the JVM and the C library
     * read, and its two token dirs. No node secret is under an allowed path.
     */
    @Test
    void unit_showsTheAgentOnlyAnAllowListOfEtcVarAndRun_andNoNodeSecret() throws IOException {
        List<String> readOnly = unitValues("BindReadOnlyPaths");

        assertThat(unitValues("TemporaryFileSystem")).containsExactlyInAnyOrder("/etc:ro", "/var:ro", "/run:ro");
        assertThat(unitValues("BindPaths")).containsExactly("/run/satoken", "/var/lib/satoken");
        assertThat(readOnly).contains("/etc/satoken", "-/etc/passwd", "-/etc/resolv.conf", "-/etc/ssl/certs");
        assertThat(readOnly).allSatisfy(p -> assertThat(p).as("a path outside /etc: another allow-list entry")
                .matches("-?/etc/.+"));
        for (String secret : NODE_SECRETS) {
            for (String allowed : readOnly) {
                String path = allowed.startsWith("-") ? allowed.substring(1) : allowed;
                assertThat(secret.equals(path) || secret.startsWith(path + "/")).as("%s under %s", secret, path)
                        .isFalse();
            }
        }
        // the old deny-list is gone: hiding whole trees covers what it named, and what it did not
        assertThat(unitValues("InaccessiblePaths")).isEmpty();
        assertThat(unitValues("ReadWritePaths")).isEmpty();
        assertThat(unitValues("CapabilityBoundingSet")).containsExactly("CAP_CHOWN", "CAP_DAC_READ_SEARCH");
    }

    /** The heap holds tokens: no core file, from the kernel (LimitCORE) or the JVM. */
    @Test
    void unit_writesNoCoreDump() throws IOException {
        assertThat(unitValues("LimitCORE")).containsExactly("0");
        assertThat(String.join(" ", unitValues("Environment"))).contains("-XX:-CreateCoredumpOnCrash");
    }

    // finding 5: the dirs holding the token dirs were 0755; no one but the agent may list them now
    @Test
    void unit_tokenParentDirs_areNotListableByOthers() throws IOException {
        assertThat(unitValues("StateDirectoryMode")).containsExactly("0711");
        assertThat(unitValues("RuntimeDirectoryMode")).containsExactly("0711");
    }

    /** Every blank-separated word of every {@code key=} line of the unit. */
    private static List<String> unitValues(String key) throws IOException {
        List<String> values = new ArrayList<>();
        for (String line : Files.readAllLines(ROOT.resolve("systemd/satoken-agent.service"))) {
            if (line.startsWith(key + "=")) {
                values.addAll(List.of(line.substring(key.length() + 1).strip().split("\\s+")));
            }
        }
        return values;
    }

    @Test
    void help_exits0() throws Exception {
        Run r = run("--help");

        assertThat(r.exit).isZero();
        assertThat(r.output).startsWith("Usage: install.sh");
    }

    private Run install() throws Exception {
        return run("--destdir", destdir.toString(), "--prefix", "/usr/local", "--jar", jar.toString());
    }

    private static Run run(String... args) throws Exception {
        return runWith(Map.of(), args);
    }

    private static Run runWith(Map<String, String> env, String... args) throws Exception {
        List<String> command = new ArrayList<>(List.of("bash", SCRIPT.toString()));
        command.addAll(List.of(args));
        ProcessBuilder pb = new ProcessBuilder(command).directory(ROOT.toFile()).redirectErrorStream(true);
        pb.environment().remove("DESTDIR");
        pb.environment().remove("SYSTEMD_UNIT_DIR");
        pb.environment().putAll(env);
        Process p = pb.start();
        p.getOutputStream().close();
        String output = new String(p.getInputStream().readAllBytes(), UTF_8);
        if (!p.waitFor(60, TimeUnit.SECONDS)) {
            p.destroyForcibly();
            throw new AssertionError("install.sh did not finish in 60 s: " + output);
        }
        return new Run(p.exitValue(), output);
    }

    private static String mode(Path path) throws IOException {
        return PosixFilePermissions.toString(Files.getPosixFilePermissions(path));
    }
}
