package io.satoken.agent.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.satoken.common.testing.Kubeconfigs;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * {@code satoken-agent validate} checks the config (with run's parser) and run's flags without contacting a
 * cluster: 0 and one OK line, or 2 and one line per error.
 */
class ValidateCommandTest {

    @TempDir
    Path dir;

    private record Result(int exit, String out, String err) {}

    record Case(String name, String config, List<String> flags, String expectedOut) {
        @Override
        public String toString() {
            return name;
        }
    }

    static Stream<Case> valid() {
        return Stream.of(
                new Case("static, two projections", """
                        mode: static
                        projections:
                          - {namespace: monitoring, serviceAccount: exporter, dir: /var/run/satoken/exporter}
                          - {namespace: monitoring, serviceAccount: other, dir: /var/run/satoken/other}
                        """, List.of(), "mode static, 2 static projections"),
                new Case("csi with a node name", "mode: csi\n", List.of("--node-name", "node-a"),
                        "mode csi, 0 static projections, CSI node node-a under /var/lib/kubelet"),
                new Case("both", """
                        mode: both
                        kubeletDir: /var/lib/k
                        projections:
                          - {namespace: ns, serviceAccount: sa, dir: /run/t}
                        """, List.of("--node-name", "n", "--qps", "5", "--burst", "10"),
                        "mode both, 1 static projection, CSI node n under /var/lib/k"));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource
    void valid(Case c) throws Exception {
        Path config = Files.writeString(dir.resolve("agent.yaml"), c.config());
        String[] args = Stream.concat(Stream.of("validate", "--config", config.toString()), c.flags().stream())
                .toArray(String[]::new);
        Result r = run(args);
        // no client configuration here: the one warning validate gives for it, nothing else
        assertThat(r.err().lines()).allMatch(l -> l.contains(": warning: run would stop here: "));
        assertThat(r.exit()).isZero();
        assertThat(r.out()).isEqualTo("OK: " + config + ": " + c.expectedOut() + "\n");
    }

    @Test
    void severalErrors_allReportedOnePerLine() throws Exception {
        Path config = Files.writeString(dir.resolve("agent.yaml"), """
                mode: static
                projections:
                  - namespace: Monitoring
                    serviceAccount: exporter
                    expirationSeconds: 60
                    dir: relative/dir
                    colour: blue
                """);
        Result r = run("validate", "--config", config.toString(), "--burst", "0");
        assertThat(r.exit()).isEqualTo(2);
        assertThat(r.out()).isEmpty();
        String prefix = "satoken-agent validate: ";
        assertThat(r.err().lines()).hasSize(5).allMatch(line -> line.startsWith(prefix));
        assertThat(r.err()).contains(prefix + "--qps must be > 0 and --burst >= 1, got qps=20.0 burst=0",
                prefix + "--config " + config + ": projections[0].namespace: ",
                prefix + "--config " + config + ": projections[0].expirationSeconds: ",
                prefix + "--config " + config + ": projections[0].dir: must be an absolute path",
                prefix + "--config " + config + ": projections[0]: ");
    }

    @Test
    void csiWithoutANodeName_isAnError() throws Exception {
        Path config = Files.writeString(dir.resolve("agent.yaml"), "mode: csi\n");
        Result r = run("validate", "--config", config.toString(), "--node-name", "");
        assertThat(r.exit()).isEqualTo(2);
        assertThat(r.err()).isEqualTo("satoken-agent validate: CSI mode needs this node's name: pass --node-name "
                + "or set NODE_NAME\n");
    }

    @Test
    void kubeconfigOfAnUnreachableServer_validatesWithoutConnecting() throws Exception {
        Path config = Files.writeString(dir.resolve("agent.yaml"), "mode: csi\n");
        // 192.0.2.0/24 is TEST-NET-1: nothing answers there; validate must not try
        Path kubeconfig = Files.writeString(dir.resolve("kubeconfig"), """
                apiVersion: v1
                kind: Config
                clusters:
                - name: c
                  cluster: {server: "https://192.0.2.1:6443"}
                users:
                - name: u
                  user: {token: secret-bearer-token}
                contexts:
                - name: x
                  context: {cluster: c, user: u}
                current-context: x
                """);
        Result r = run("validate", "--config", config.toString(), "--node-name", "n", "--kubeconfig",
                kubeconfig.toString());
        assertThat(r.err()).isEmpty();
        assertThat(r.exit()).isZero();
    }

    @Test
    void brokenOrMissingKubeconfig_isReportedWithoutItsContent() throws Exception {
        Path config = Files.writeString(dir.resolve("agent.yaml"), "mode: csi\n");
        Path kubeconfig = Files.writeString(dir.resolve("kubeconfig"), "users: [{name: u, user: {token: s3cret\n");
        Result r = run("validate", "--config", config.toString(), "--node-name", "n", "--kubeconfig",
                kubeconfig.toString());
        assertThat(r.exit()).isEqualTo(2);
        assertThat(r.err()).startsWith("satoken-agent validate: kubeconfig " + kubeconfig + ": not a valid kubeconfig")
                .doesNotContain("s3cret");

        Path noContext = Files.writeString(dir.resolve("empty-context"), "apiVersion: v1\nkind: Config\n");
        r = run("validate", "--config", config.toString(), "--node-name", "n", "--kubeconfig", noContext.toString());
        assertThat(r.exit()).isEqualTo(2);
        assertThat(r.err()).contains("kubeconfig " + noContext + ": not a valid kubeconfig");

        r = run("validate", "--config", config.toString(), "--node-name", "n", "--kubeconfig",
                dir.resolve("absent").toString());
        assertThat(r.err()).contains("--kubeconfig " + dir.resolve("absent") + ": not found");
    }

    @Test
    void configFlag_isRequired() {
        Result r = run("validate");
        assertThat(r.exit()).isEqualTo(2);
        assertThat(r.err()).contains("--config");
    }

    /** run would stop at its first API call with no client configuration: validate says so, and still exits 0. */
    @Test
    void noClientConfiguration_isWarnedOf(@TempDir Path home) throws Exception {
        assumeTrue(System.getenv("KUBECONFIG") == null && System.getenv("KUBERNETES_SERVICE_HOST") == null,
                "this test needs an environment without $KUBECONFIG and not in a pod");
        Path config = Files.writeString(dir.resolve("static.yaml"),
                "mode: static\nprojections:\n  - {namespace: ns, serviceAccount: sa, dir: /run/t}\n");
        Path kubeconfig = Kubeconfigs.withToken(dir.resolve("kubeconfig"), "https://127.0.0.1:6443");
        String realHome = System.getProperty("user.home");
        System.setProperty("user.home", home.toString());
        Result without;
        Result with;
        try {
            without = run("validate", "--config", config.toString());
            with = run("validate", "--config", config.toString(), "--kubeconfig", kubeconfig.toString());
        } finally {
            System.setProperty("user.home", realHome);
        }

        assertThat(without.exit()).isZero();
        assertThat(without.out()).startsWith("OK: ");
        assertThat(without.err()).startsWith("satoken-agent validate: warning: run would stop here: no Kubernetes "
                + "client configuration found: --kubeconfig not given;").contains(home.resolve(".kube/config") + " missing");
        assertThat(with.exit()).isZero();
        assertThat(with.err()).isEmpty();
    }

    private static Result run(String... args) {
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        int exit = AgentCommand.execute(new PrintWriter(out, true), new PrintWriter(err, true), args);
        return new Result(exit, out.toString(), err.toString());
    }
}
