package io.satoken.e2e;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.satoken.common.testing.MountTable;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

/**
 * The systemd unit as {@code systemd/install.sh --destdir} installs it is one systemd accepts and runs as
 * described: {@code systemd-analyze verify} on the staged root (so {@code ExecStart}'s installed launcher
 * must exist and be executable) reports nothing about it; {@code systemd-analyze security} rates its
 * exposure at most 2.0 (README claims 1.8); and the status the agent's {@code run} exits with after
 * SIGTERM, which is how {@code systemctl stop} stops it, is one the unit counts as success.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class SystemdUnitE2E {

    private static final String TEST = "systemd-unit";
    private static final String UNIT = "satoken-agent.service";
    private static final double MAX_EXPOSURE = 2.0;
    private static final Pattern EXPOSURE =
            Pattern.compile("Overall exposure level for " + Pattern.quote(UNIT) + ": (\\d+(?:\\.\\d+)?) ");

    private Path root;

    @BeforeAll
    void installIntoAStagingRoot() throws Exception {
        if (!Commands.onPath("systemd-analyze")) {
            System.err.println("*** SKIPPED SystemdUnitE2E: systemd-analyze is not installed ***");
            Assumptions.assumeTrue(false, "SystemdUnitE2E needs systemd-analyze");
        }
        root = Files.createTempDirectory("satoken-e2e-systemd-");
        Commands.Result install = Commands.run("systemd-unit-install.sh", List.of("bash",
                E2E.repo().resolve("systemd/install.sh").toString(), "--destdir", root.toString(),
                "--jar", E2E.repo().resolve("agent/target/satoken-agent.jar").toString()));
        assertThat(install.exit()).as("install.sh; output:\n%s", install.output()).isZero();
        // --root looks every unit up under the root: the host's own units (sysinit.target, ...) our unit's
        // default dependencies name must be there too.
        Path systemUnits = Path.of("/usr/lib/systemd/system");
        Assumptions.assumeTrue(Files.isDirectory(systemUnits), "no " + systemUnits + " to verify against");
        copyTree(systemUnits, root.resolve("usr/lib/systemd/system"));
    }

    @AfterAll
    void removeRoot() {
        MemoryDirs.delete(root);
    }

    @Test
    void installedUnit_passesSystemdAnalyzeVerify_withNothingSaidAboutIt() throws Exception {
        Commands.Result verify = analyze("verify", "--root=" + root, UNIT);
        List<String> aboutUs = verify.output().lines().filter(l -> l.contains("satoken")).toList();
        Figures.record(TEST, String.format("systemd-analyze verify (%s) of the installed unit: exit %d, %d lines"
                + " about it", version(), verify.exit(), aboutUs.size()));
        assertThat(verify.exit()).as("systemd-analyze verify exit status; output:\n%s", verify.output()).isZero();
        assertThat(aboutUs).as("systemd-analyze verify's remarks on our unit").isEmpty();
    }

    @Test
    void installedUnit_securityExposure_isAtMost2() throws Exception {
        Commands.Result security = analyze("security", "--offline=yes", "--root=" + root, UNIT);
        assertThat(security.exit()).as("systemd-analyze security; output:\n%s", security.output()).isZero();
        Matcher m = EXPOSURE.matcher(security.output());
        assertThat(m.find()).as("an overall exposure line in:\n%s", security.output()).isTrue();
        double exposure = Double.parseDouble(m.group(1));
        Figures.record(TEST, String.format("systemd-analyze security --offline=yes (%s): overall exposure %.1f"
                + " (README says 1.8; bound %.1f)", version(), exposure, MAX_EXPOSURE));
        assertThat(exposure).isLessThanOrEqualTo(MAX_EXPOSURE);
    }

    /**
     * The agent's CAP_DAC_READ_SEARCH reads past file modes, so /etc, /var and /run, where a node keeps its
     * credentials, are empty file systems to it but for an allow-list; systemd accepts the settings (verify
     * above), with the exposure still at most 2.0 (above).
     */
    @Test
    void installedUnit_showsTheAgentOnlyItsAllowList() throws Exception {
        UnitFile unit = unit();
        Figures.record(TEST, "TemporaryFileSystem: " + String.join(" ", unit.values("TemporaryFileSystem"))
                + "; BindPaths: " + String.join(" ", unit.values("BindPaths"))
                + "; BindReadOnlyPaths: " + String.join(" ", unit.values("BindReadOnlyPaths")));
        assertThat(unit.values("TemporaryFileSystem")).containsExactlyInAnyOrder("/etc:ro", "/var:ro", "/run:ro");
        assertThat(unit.values("BindPaths")).containsExactly("/run/satoken", "/var/lib/satoken");
        assertThat(unit.values("BindReadOnlyPaths")).allSatisfy(p -> assertThat(p).matches("-?/etc/.+"));
        assertThat(unit.values("LimitCORE")).containsExactly("0");
        assertThat(unit.values("StateDirectoryMode")).containsExactly("0711");
        assertThat(unit.values("RuntimeDirectoryMode")).containsExactly("0711");
    }

    /**
     * The allow-list is enough to run the agent, and hides the node's secrets: this host's file system as the
     * unit shows it (a private mount namespace with empty /etc, /var and /run, and the unit's BindPaths and
     * BindReadOnlyPaths put back, with its two token dirs in temporary dirs), the installed launcher runs the
     * agent's demo there, whose tokens are written to /run/satoken; /etc/shadow and kubelet's directory are
     * not there. systemd itself cannot run here; this is what its TemporaryFileSystem= and Bind*Paths= do.
     */
    @Test
    void installedUnit_allowList_isEnoughToRunTheAgent_andHidesTheNodesSecrets() throws Exception {
        Assumptions.assumeTrue(Commands.onPath("unshare"), "unshare not installed");
        String cannotMount = MountTable.cannotMountReason();
        if (cannotMount != null) {
            System.err.println("*** SKIPPED SystemdUnitE2E sandbox: " + cannotMount + " ***");
            Assumptions.abort(cannotMount);
        }
        UnitFile unit = unit();
        Path stage = Files.createDirectories(root.resolve("sandbox"));
        Path run = Files.createDirectories(root.resolve("run/satoken"));
        Path lib = Files.createDirectories(root.resolve("var/lib/satoken"));
        StringBuilder binds = new StringBuilder();
        for (String path : unit.values("BindPaths")) {
            binds.append("rw ").append(path).append(' ').append(path.equals("/run/satoken") ? run : lib).append('\n');
        }
        for (String path : unit.values("BindReadOnlyPaths")) {
            String p = path.startsWith("-") ? path.substring(1) : path;
            // /etc/satoken: the staged one (the demo reads nothing there; it must only exist)
            binds.append("ro ").append(p).append(' ').append(p.equals("/etc/satoken") ? root.resolve("etc/satoken") : p)
                    .append('\n');
        }
        Files.writeString(stage.resolve("binds"), binds);
        Path script = Files.writeString(stage.resolve("sandbox.sh"), SANDBOX);
        List<String> hidden = unit.values("TemporaryFileSystem").stream().map(t -> t.replace(":ro", "")).toList();
        String launcher = root + unit.execStart().get(0);
        String check = "for f in /etc/shadow /etc/ssh /var/lib/kubelet /var/lib/containerd /run/containerd; do"
                + " [ ! -e \"$f\" ] || { echo \"visible: $f\"; exit 3; }; done; exec " + launcher
                + " demo --dir /run/satoken/demo --duration 3s --ttl 10s";

        List<String> command = new ArrayList<>(List.of("unshare", "--mount", "--propagation", "private", "sh",
                script.toString(), stage.toString(), String.join(" ", hidden), "env",
                "SATOKEN_AGENT_JAR=" + root + unit.environment().get("SATOKEN_AGENT_JAR"),
                "JAVA_OPTS=" + unit.environment().get("JAVA_OPTS"), "sh", "-c", check));
        Commands.Result result = Commands.run("systemd-unit-sandbox", command, Duration.ofMinutes(2));

        Figures.record(TEST, String.format("the agent's demo in the unit's file-system view (/etc, /var, /run"
                + " emptied, %d paths put back): exit %d", unit.values("BindPaths").size()
                + unit.values("BindReadOnlyPaths").size(), result.exit()));
        assertThat(result.exit()).as("the demo in the unit's file-system view:%n%s", result.output()).isZero();
        assertThat(run.resolve("demo/tokens/vault/token")).isRegularFile();
    }

    /**
     * Makes the unit's file-system view in a private mount namespace, then runs the rest of its arguments:
     * {@code sandbox.sh STAGE "DIRS TO EMPTY" COMMAND...}. {@code STAGE/binds} lists {@code ro|rw DEST SRC}; a
     * missing source is skipped (the unit's {@code -} prefix), a link is followed (as systemd does). Sources are
     * bound into STAGE first, as emptying /etc, /var and /run would hide them.
     */
    private static final String SANDBOX = """
            set -eu
            stage=$1; hide=$2; shift 2
            i=0
            : > "$stage/list"
            while read -r mode dest src; do
              [ -e "$src" ] || continue
              real=$(readlink -f "$src")
              i=$((i+1))
              if [ -d "$real" ]; then mkdir -p "$stage/m$i"; else : > "$stage/m$i"; fi
              mount --bind "$real" "$stage/m$i"
              echo "$mode $dest $stage/m$i" >> "$stage/list"
            done < "$stage/binds"
            for d in $hide; do mount -t tmpfs -o mode=0755 tmpfs "$d"; done
            while read -r mode dest from; do
              if [ -d "$from" ]; then mkdir -p "$dest"; else mkdir -p "$(dirname "$dest")"; : > "$dest"; fi
              mount --bind "$from" "$dest"
              if [ "$mode" = ro ]; then mount -o remount,bind,ro "$dest"; fi
            done < "$stage/list"
            exec "$@"
            """;

    private UnitFile unit() throws IOException {
        return UnitFile.parse(root.resolve("etc/systemd/system").resolve(UNIT));
    }

    /**
     * {@code systemctl stop} sends SIGTERM; a service whose main process then exits (rather than dies by
     * the signal) with a status that is neither 0 nor in {@code SuccessExitStatus=} ends up "failed". Left to
     * itself the JVM would run its shutdown hooks and {@code exit(128 + 15)}: an exit, not a death by signal.
     */
    @Test
    void agentRun_exitStatusAfterSigterm_isOneTheUnitCountsAsSuccess() throws Exception {
        Path etc = root.resolve("etc/satoken");
        Path config = etc.resolve("sigterm-agent.yaml");
        Files.writeString(config, "mode: static\nprojections:\n  - namespace: a\n    serviceAccount: b\n"
                + "    dir: " + root.resolve("run/satoken/sigterm") + "\n");
        Path kubeconfig = etc.resolve("sigterm-kubeconfig");
        // no API server: the token request fails and is retried, which does not matter here
        Files.writeString(kubeconfig, String.join("\n", "apiVersion: v1", "kind: Config", "clusters:",
                "- name: none", "  cluster:", "    server: https://127.0.0.1:" + E2E.freePort(), "users:",
                "- name: none", "  user: {}", "contexts:", "- name: none", "  context: {cluster: none, user: none}",
                "current-context: none", ""));
        UnitFile unit = UnitFile.parse(root.resolve("etc/systemd/system").resolve(UNIT));
        List<Integer> success = new ArrayList<>(List.of(0));
        for (String setting : unit.settings()) {
            if (setting.startsWith("SuccessExitStatus=")) {
                for (String word : setting.substring("SuccessExitStatus=".length()).split("\\s+")) {
                    if (word.matches("\\d+")) {
                        success.add(Integer.parseInt(word));
                    }
                }
            }
        }
        String metrics = "127.0.0.1:" + E2E.freePort();
        Map<String, String> env = Map.of("SATOKEN_AGENT_JAR",
                root + unit.environment().get("SATOKEN_AGENT_JAR"));
        try (SatokenProcess agent = SatokenProcess.start("systemd-unit-sigterm-agent",
                Path.of(root + unit.execStart().get(0)), List.of("run", "--config", config.toString(),
                        "--kubeconfig", kubeconfig.toString(), "--metrics-address", metrics), metrics, env)) {
            await().atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(100))
                    .until(() -> !agent.isAlive()
                            || agent.logText().contains("static mode: 1 projection(s) from " + config));
            assertThat(agent.isAlive()).as("agent running; log %s", agent.log()).isTrue();
            int exit = agent.stop();
            Figures.record(TEST, String.format("satoken-agent run exits %d after SIGTERM; the unit's success"
                    + " statuses: %s", exit, success));
            assertThat(success).as("exit statuses the unit counts as success (0 and SuccessExitStatus=);"
                    + " `run` exited %d after SIGTERM", exit).contains(exit);
        }
    }

    private static Commands.Result analyze(String... args) throws IOException, InterruptedException {
        List<String> command = new ArrayList<>(List.of("systemd-analyze"));
        command.addAll(List.of(args));
        return Commands.run("systemd-analyze-" + args[0], command);
    }

    private static String version() throws IOException, InterruptedException {
        return Commands.run("systemd-analyze-version", List.of("systemd-analyze", "--version"))
                .output().lines().findFirst().orElse("systemd-analyze ?");
    }

    private static void copyTree(Path from, Path to) throws IOException {
        try (Stream<Path> walk = Files.walk(from)) {
            for (Path p : walk.toList()) {
                Path target = to.resolve(from.relativize(p).toString());
                if (Files.isSymbolicLink(p)) {
                    Files.createDirectories(target.getParent());
                    Files.createSymbolicLink(target, Files.readSymbolicLink(p));
                } else if (Files.isDirectory(p)) {
                    Files.createDirectories(target);
                } else {
                    Files.copy(p, target, StandardCopyOption.COPY_ATTRIBUTES);
                }
            }
        }
    }
}
