package io.satoken.controlplane.cli;

import static org.assertj.core.api.Assertions.assertThat;

import io.satoken.controlplane.webhook.TestCertificates;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code satoken-controlplane validate} checks run's flags and files, those of disabled parts too, reports every
 * error at once and contacts no cluster; {@code run} reports the same errors, all at once, before it starts.
 */
class ValidateCommandTest {

    @TempDir
    Path tmp;

    Path rsaKey;
    Path caFile;
    TestCertificates.Pair serving;

    private record Result(int exit, String out, String err) {}

    @BeforeEach
    void files() throws Exception {
        Path keys = Path.of(ValidateCommandTest.class.getResource("/keys/rsa-pkcs8.pem").toURI()).getParent();
        rsaKey = keys.resolve("rsa-pkcs8.pem");
        caFile = keys.resolve("certificate.pem");
        serving = TestCertificates.write(Files.createTempDirectory(tmp, "tls"), "localhost");
    }

    @Test
    void everythingValid_exits0WithOneLine() {
        Result r = run("validate", "--controllers=*,tokens", "--service-account-private-key-file", rsaKey.toString(),
                "--root-ca-file", caFile.toString(), "--webhook-address=127.0.0.1:9443", "--tls-cert-file", serving.cert().toString(),
                "--tls-private-key-file", serving.key().toString(),
                "--agent-service-account=satoken-system/satoken-agent");
        assertThat(r.err()).isEmpty();
        assertThat(r.exit()).isZero();
        assertThat(r.out()).isEqualTo("OK: controllers tokens,serviceaccounts,root-ca,aggregation; webhook on "
                + "127.0.0.1:9443 (pods,serviceaccount-token); leader election on\n");
    }

    @Test
    void defaultControllers_leaveTheTokensControllerOut_andNeedNoSigningKey() {
        Result r = run("validate", "--root-ca-file", caFile.toString());
        assertThat(r.err()).isEmpty();
        assertThat(r.exit()).isZero();
        assertThat(r.out()).isEqualTo("OK: controllers serviceaccounts,root-ca,aggregation; webhook off; "
                + "leader election on\n");
    }

    @Test
    void kubeconfigOfAnUnreachableServer_stillValidates() throws Exception {
        // 192.0.2.0/24 is TEST-NET-1: nothing answers there; validate must not try
        Path kubeconfig = Files.writeString(tmp.resolve("kubeconfig"), """
                apiVersion: v1
                kind: Config
                clusters:
                - name: c
                  cluster: {server: "https://192.0.2.1:6443", insecure-skip-tls-verify: true}
                users:
                - name: u
                  user: {token: secret-bearer-token}
                contexts:
                - name: x
                  context: {cluster: c, user: u}
                current-context: x
                """);
        Result r = run("validate", "--kubeconfig", kubeconfig.toString(), "--controllers=serviceaccounts",
                "--no-leader-elect");
        assertThat(r.exit()).as(r.err()).isZero();
        assertThat(r.out()).startsWith("OK: controllers serviceaccounts; webhook off; leader election off");
    }

    @Test
    void leaderElectionDurationsOfSeveralParts_validate() {
        // the control plane's duration flags take the agent's grammar too (1h30m, 1m500ms)
        Result r = run("validate", "--controllers=serviceaccounts", "--leader-elect-lease-duration=1m30s",
                "--leader-elect-renew-deadline=1m", "--leader-elect-retry-period=2s500ms");
        assertThat(r.exit()).as(r.err()).isZero();
        assertThat(r.out()).startsWith("OK: controllers serviceaccounts; webhook off; leader election on");
    }

    @Test
    void brokenKubeconfig_isReportedWithoutItsContent() throws Exception {
        Path kubeconfig = Files.writeString(tmp.resolve("kubeconfig"), "users: [{name: u, user: {token: s3cret\n");
        Result r = run("validate", "--kubeconfig", kubeconfig.toString(), "--controllers=serviceaccounts");
        assertThat(r.exit()).isEqualTo(2);
        assertThat(r.err()).contains("kubeconfig " + kubeconfig + ": not a valid kubeconfig").doesNotContain("s3cret");
    }

    @Test
    void severalErrors_allReportedOnePerLine() {
        for (String command : List.of("validate", "run")) {
            Result r = run(command, "--controllers=*,bogus", "--metrics-address=9090", "--concurrent-syncs=0",
                    "--leader-elect-lease-duration=5s", "--leader-elect-renew-deadline=10s",
                    "--webhooks=pods,nope");
            assertThat(r.exit()).isEqualTo(2);
            assertThat(r.err().lines()).as(command).containsExactly(
                    "satoken-controlplane " + command + ": --controllers: unknown controller \"bogus\" (known: tokens, serviceaccounts, root-ca, "
                            + "aggregation, injection-check, * for all on by default, -name to disable one; tokens and "
                            + "injection-check only when named)",
                    "satoken-controlplane " + command + ": --metrics-address: expected HOST:PORT, got \"9090\"",
                    "satoken-controlplane " + command + ": --concurrent-syncs must be at least 1, got 0",
                    "satoken-controlplane " + command + ": leader election needs lease duration > renew deadline > "
                            + "retry period, got 5s > 10s > 2s",
                    "satoken-controlplane " + command + ": --webhooks: unknown webhook \"nope\"; the webhooks are "
                            + "agent-tokens, pods, serviceaccount-token");
        }
    }

    @Test
    void flagsOfDisabledParts_areChecked() throws Exception {
        Path notPem = Files.writeString(tmp.resolve("not-pem.key"), "hello\n");
        List<String> args = new ArrayList<>(List.of("validate", "--controllers=serviceaccounts", "--no-leader-elect",
                // the lease timings are checked without leader election
                "--leader-elect-lease-duration=1s",
                // the tokens controller is off, its key is read anyway
                "--service-account-private-key-file", notPem.toString(),
                // the webhook is off (no --webhook-address), its files are read anyway
                "--tls-cert-file", tmp.resolve("absent.crt").toString(),
                "--api-audiences=a,,b"));
        Result r = run(args.toArray(String[]::new));
        assertThat(r.exit()).isEqualTo(2);
        assertThat(r.err()).contains(
                "lease duration > renew deadline > retry period, got 1s > 10s > 2s",
                "--service-account-private-key-file " + notPem,
                "need --webhook-address",
                "--tls-cert-file " + tmp.resolve("absent.crt") + ": not found or not readable",
                "--api-audiences: expected a comma-separated list of audiences");
        assertThat(r.err().lines()).hasSize(5);
    }

    @Test
    void servingPairGivenWithoutTheWebhook_isLoaded() {
        Result r = run("validate", "--controllers=serviceaccounts", "--tls-cert-file", caFile.toString(),
                "--tls-private-key-file", rsaKey.toString());
        assertThat(r.exit()).isEqualTo(2);
        assertThat(r.err()).contains("need --webhook-address",
                "--tls-private-key-file: the key does not belong to the first certificate in --tls-cert-file");
    }

    @Test
    void help_showsTheSharedClientAndMetricsFlagsWithThisProgramsDefault() {
        for (String command : new String[] {"run", "validate"}) {
            Result r = run(command, "--help");
            assertThat(r.exit()).isZero();
            assertThat(r.out()).contains("--kubeconfig=FILE", "--metrics-address=HOST:PORT", "(default: 0.0.0.0:10260)");
        }
    }

    private static Result run(String... args) {
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        int exit = ControlplaneCommand.execute(new PrintWriter(out, true), new PrintWriter(err, true), args);
        return new Result(exit, out.toString(), err.toString());
    }
}
