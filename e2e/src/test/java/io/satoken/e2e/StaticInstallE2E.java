package io.satoken.e2e;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.kubernetes.client.openapi.apis.CoreV1Api;
import io.kubernetes.client.openapi.models.V1Namespace;
import io.kubernetes.client.openapi.models.V1ObjectMeta;
import io.satoken.common.testing.KubeApiServer;
import io.satoken.common.testing.RequiresKubeApiServer;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * Static mode as installed by {@code systemd/install.sh} into a staging root ({@code --destdir}), run with
 * the installed config: the installed files have the modes install.sh documents; the installed launcher,
 * started as the unit's {@code ExecStart} starts it and with the unit's {@code Environment} (every absolute
 * path under the staging root), writes the example config's two tokens with their configured modes and
 * owners in kubelet's layout, and the API server accepts each; editing the config (another audience,
 * another lifetime) re-issues both tokens without a restart.
 *
 * <p>The unit's {@code UMask=0077} is applied, and {@code /run/satoken} and {@code /var/lib/satoken} are made
 * 0711 as systemd makes them ({@code /var/run} linking to {@code /run}). Two departures from the unit, both
 * forced by running inside a test: the agent runs as root (the
 * staging install makes no {@code satoken} user, and chown to the configured owners needs CAP_CHOWN), and
 * {@code --metrics-address} is a free port, since other tests on the host may hold the default 9810.
 */
@RequiresKubeApiServer
class StaticInstallE2E {

    private static final String TEST = "static-install";
    private static final Duration WAIT = Duration.ofSeconds(60);
    private static final Pattern DIR_LINE = Pattern.compile("(?m)^(\\s*dir:\\s*)(/\\S+)");

    @RegisterExtension
    static final ApiServerFixture API = new ApiServerFixture(TEST);

    @Test
    void installedAgent_writesTheExampleTokensWithTheirModesAndOwners_andReissuesThemWhenTheConfigIsEdited(
            @TempDir Path root) throws Exception {
        KubeApiServer server = API.server();
        // install.sh --destdir: the files and modes its usage documents
        Commands.Result install = Commands.run("static-install-install.sh", List.of("bash",
                E2E.repo().resolve("systemd/install.sh").toString(), "--destdir", root.toString(),
                "--jar", E2E.repo().resolve("agent/target/satoken-agent.jar").toString()));
        assertThat(install.exit()).as("install.sh exit status; output:\n%s", install.output()).isZero();
        Path launcher = root.resolve("usr/local/bin/satoken-agent");
        Path unit = root.resolve("etc/systemd/system/satoken-agent.service");
        Path config = root.resolve("etc/satoken/agent.yaml");
        assertThat(FileModes.of(root.resolve("usr/local/lib/satoken/satoken-agent.jar"))).isEqualTo("0644 0:0");
        assertThat(FileModes.of(launcher)).isEqualTo("0755 0:0");
        assertThat(FileModes.of(unit)).isEqualTo("0644 0:0");
        assertThat(FileModes.of(config)).isEqualTo("0640 0:0");

        // the operator's edits: token dirs under the staging root, and the agent's kubeconfig
        String installed = Files.readString(config);
        Files.writeString(config, underRoot(installed, root));
        Path kubeconfig = root.resolve("etc/satoken/kubeconfig");
        server.writeKubeconfig(kubeconfig, server.adminToken());
        FileModes.set(kubeconfig, 0640);
        Path exporterDir = root.resolve("run/satoken/node-exporter");
        Path resticDir = root.resolve("var/lib/satoken/restic");
        for (String[] sa : new String[][] {{"monitoring", "node-exporter"}, {"backup", "restic"}}) {
            new CoreV1Api(server.adminClient()).createNamespace(new V1Namespace().metadata(new V1ObjectMeta().name(sa[0])))
                    .execute();
            server.createServiceAccount(sa[0], sa[1]);
        }

        // ExecStart and Environment, as the installed unit has them, each absolute path under the root
        UnitFile service = UnitFile.parse(unit);
        List<String> exec = service.execStart();
        assertThat(exec.get(0)).isEqualTo("/usr/local/bin/satoken-agent");
        List<String> args = new ArrayList<>();
        for (String arg : exec.subList(1, exec.size())) {
            args.add(arg.startsWith("/") ? root + arg : arg);
        }
        String metrics = "127.0.0.1:" + E2E.freePort();
        args.addAll(List.of("--metrics-address", metrics));
        Map<String, String> env = new HashMap<>(service.environment());
        env.put("SATOKEN_AGENT_JAR", root + env.get("SATOKEN_AGENT_JAR"));

        Path exporterToken = exporterDir.resolve("token");
        Path resticToken = resticDir.resolve("token");
        // UMask=0077 as the unit sets it, and the two dirs systemd makes 0711 (RuntimeDirectory=,
        // StateDirectory=): the agent must make the token dirs under them reachable itself.
        assertThat(service.settings()).contains("UMask=0077", "RuntimeDirectoryMode=0711", "StateDirectoryMode=0711");
        for (Path systemdDir : List.of(root.resolve("run/satoken"), root.resolve("var/lib/satoken"))) {
            Files.createDirectories(systemdDir);
            FileModes.set(systemdDir, 0711);
        }
        Files.createDirectories(root.resolve("var"));
        Files.createSymbolicLink(root.resolve("var/run"), Path.of("../run"));
        Path umaskExec = root.resolve("umask-exec");
        Files.writeString(umaskExec, "#!/bin/sh\numask 0077\nexec \"$@\"\n");
        FileModes.set(umaskExec, 0755);
        args.add(0, root + exec.get(0));
        try (SatokenProcess agent = SatokenProcess.start("static-install-agent", umaskExec, args, metrics, env)) {
            agent.awaitReady(WAIT);

            // the two tokens: documented modes and owners, kubelet's layout, accepted by the API server
            String exporter1 = IssuedTokens.read(exporterToken);
            String restic1 = IssuedTokens.read(resticToken);
            assertLayout(exporterDir, "0600 65534:65534", "0751 0:65534");
            assertLayout(resticDir, "0640 0:34", "0750 0:34");
            assertThat(ApiChecks.audiences(exporter1)).containsExactly("https://vault.example.com");
            assertThat(ApiChecks.accepted(server, exporter1, "https://vault.example.com",
                    "system:serviceaccount:monitoring:node-exporter")).as("node-exporter token accepted").isTrue();
            assertThat(ApiChecks.audiences(restic1)).containsExactly(KubeApiServer.ISSUER);
            assertThat(JwtClaims.of(restic1).lifetime()).isEqualTo(Duration.ofSeconds(7200));
            assertThat(ApiChecks.accepted(server, restic1, KubeApiServer.ISSUER,
                    "system:serviceaccount:backup:restic")).as("restic token accepted").isTrue();

            // explain, through the status endpoint the installed config names, by the token file's path
            Commands.Result explained = Commands.run("static-install-explain", List.of(E2E.agentLauncher().toString(),
                    "explain", "--config", config.toString(), exporterToken.toString()), WAIT);
            assertThat(explained.exit()).as("explain's exit status; output:\n%s", explained.output()).isZero();
            assertThat(explained.output()).contains("Static projection", exporterDir.toString(),
                    "monitoring/node-exporter", "https://vault.example.com", "nothing (only its expiry ends it)",
                    "expires at:", "next refresh:").doesNotContainPattern(IssuedTokens.JWT_SHAPE);

            // edit the installed config: another audience for one, another lifetime for the other
            String edited = Files.readString(config)
                    .replace("audiences: [https://vault.example.com]", "audiences: [https://vault2.example.com]")
                    .replace("expirationSeconds: 7200", "expirationSeconds: 3600");
            assertThat(edited).contains("vault2.example.com", "expirationSeconds: 3600");
            long editedAt = System.nanoTime();
            Files.writeString(config, edited);
            await().atMost(WAIT).pollInterval(Duration.ofMillis(200)).until(() ->
                    ApiChecks.audiences(IssuedTokens.read(exporterToken)).equals(List.of("https://vault2.example.com"))
                            && JwtClaims.of(IssuedTokens.read(resticToken)).lifetime().equals(Duration.ofSeconds(3600)));
            double reissue = (System.nanoTime() - editedAt) / 1e9;
            String exporter2 = IssuedTokens.read(exporterToken);
            String restic2 = IssuedTokens.read(resticToken);
            assertThat(exporter2.equals(exporter1)).as("node-exporter token replaced").isFalse();
            assertThat(restic2.equals(restic1)).as("restic token replaced").isFalse();
            assertLayout(exporterDir, "0600 65534:65534", "0751 0:65534");
            assertLayout(resticDir, "0640 0:34", "0750 0:34");
            assertThat(ApiChecks.accepted(server, exporter2, "https://vault2.example.com",
                    "system:serviceaccount:monitoring:node-exporter")).as("new node-exporter token accepted").isTrue();
            assertThat(ApiChecks.accepted(server, restic2, KubeApiServer.ISSUER,
                    "system:serviceaccount:backup:restic")).as("new restic token accepted").isTrue();
            assertThat(agent.isAlive()).as("the same agent process throughout").isTrue();
            Figures.record(TEST, String.format("static install: 2 tokens written by the installed launcher with"
                    + " 0600 65534:65534 and 0640 0:34; both re-issued %.1f s after the config edit, no restart",
                    reissue));
        }
    }

    /** The config with every {@code dir: /abs} moved under {@code root}. */
    private static String underRoot(String yaml, Path root) {
        Matcher m = DIR_LINE.matcher(yaml);
        StringBuilder out = new StringBuilder();
        int dirs = 0;
        while (m.find()) {
            m.appendReplacement(out, Matcher.quoteReplacement(m.group(1) + root + m.group(2)));
            dirs++;
        }
        m.appendTail(out);
        assertThat(dirs).as("dir: lines in the installed agent.yaml").isEqualTo(2);
        assertThat(out.toString()).contains("\nstatusSocket: /run/satoken/");
        return out.toString().replace("\nstatusSocket: /run/", "\nstatusSocket: " + root + "/run/");
    }

    /**
     * kubelet's layout with README's modes: the dir and {@code ..data}'s one timestamped dir of
     * {@code dirModeOwner} (0750 in the files' group, 0751 when the file's owner reads it, where kubelet's
     * AtomicWriter makes 0755), {@code token} a
     * link through {@code ..data} to a file of {@code fileModeOwner}.
     */
    private static void assertLayout(Path dir, String fileModeOwner, String dirModeOwner) throws IOException {
        assertThat(FileModes.of(dir)).as("%s", dir).isEqualTo(dirModeOwner);
        Path data = Files.readSymbolicLink(dir.resolve("..data"));
        assertThat(data.toString()).matches("\\.\\.\\d{4}(_\\d{2}){5}\\.\\d+");
        assertThat(FileModes.of(dir.resolve(data))).as("%s", dir.resolve(data)).isEqualTo(dirModeOwner);
        assertThat(Files.readSymbolicLink(dir.resolve("token")).toString()).isEqualTo("..data/token");
        assertThat(FileModes.of(dir.resolve(data).resolve("token"))).as("%s/token", dir).isEqualTo(fileModeOwner);
        assertThat(DemoTokens.entries(dir)).containsExactlyInAnyOrder("..data", data.toString(), "token");
    }
}
