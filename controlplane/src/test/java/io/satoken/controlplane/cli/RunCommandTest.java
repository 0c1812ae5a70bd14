package io.satoken.controlplane.cli;

import static org.assertj.core.api.Assertions.assertThat;

import io.satoken.controlplane.webhook.TestCertificates;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.net.URISyntaxException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * {@code satoken-controlplane run} refuses bad flags, key and CA files before it touches the cluster:
 * exit 2 with one line per error naming the flag, the file and the rule; {@code validate} refuses the same.
 */
class RunCommandTest {

    record Case(String name, List<String> args, String expectedError) {
        @Override
        public String toString() {
            return name;
        }
    }

    @TempDir
    static Path tmp;

    /** A serving certificate and its key, so the checks after loading them are reached. */
    TestCertificates.Pair serving;

    @BeforeEach
    void files() throws Exception {
        Files.writeString(tmp.resolve("not-pem.crt"), "hello\n");
        serving = TestCertificates.write(Files.createTempDirectory(tmp, "tls"), "localhost");
    }

    static Stream<Case> badInput() throws URISyntaxException {
        Path keys = Path.of(RunCommandTest.class.getResource("/keys/rsa-pkcs8.pem").toURI()).getParent();
        String rsaKey = keys.resolve("rsa-pkcs8.pem").toString();
        String caFile = keys.resolve("certificate.pem").toString();
        return Stream.of(
                new Case("tokens named without a key", List.of("--controllers=*,tokens", "--root-ca-file", caFile),
                        "the tokens controller needs --service-account-private-key-file"),
                new Case("missing key file", List.of("--service-account-private-key-file", "/nonexistent/key.pem",
                        "--root-ca-file", caFile), "--service-account-private-key-file /nonexistent/key.pem: not found"),
                new Case("unsupported key type", List.of("--service-account-private-key-file",
                        keys.resolve("ed25519-pkcs8.pem").toString(), "--root-ca-file", caFile), "unsupported key type"),
                new Case("encrypted key", List.of("--service-account-private-key-file",
                        keys.resolve("encrypted-pkcs8.pem").toString(), "--root-ca-file", caFile), "encrypted"),
                new Case("CA file that is not PEM", List.of("--service-account-private-key-file", rsaKey,
                        "--root-ca-file", "NOTPEM"), "not a PEM certificate bundle"),
                new Case("missing CA file", List.of("--service-account-private-key-file", rsaKey,
                        "--root-ca-file", "/nonexistent/ca.crt"), "--root-ca-file /nonexistent/ca.crt: not found"),
                new Case("root-ca without a CA", List.of("--service-account-private-key-file", rsaKey),
                        "the root-ca controller needs --root-ca-file"),
                new Case("unknown controller", List.of("--controllers=*,bogus"),
                        "--controllers: unknown controller \"bogus\""),
                new Case("bad metrics address", List.of("--controllers=serviceaccounts", "--metrics-address=9090"),
                        "--metrics-address: expected HOST:PORT, got \"9090\""),
                new Case("bad duration", List.of("--controllers=serviceaccounts", "--leader-elect-lease-duration=soon"),
                        "expected a duration like 15s"),
                new Case("renew deadline not below the lease", List.of("--controllers=serviceaccounts",
                        "--leader-elect-lease-duration=5s", "--leader-elect-renew-deadline=10s"),
                        "lease duration > renew deadline > retry period"),
                new Case("no workers", List.of("--controllers=serviceaccounts", "--concurrent-syncs=0"),
                        "--concurrent-syncs must be at least 1, got 0"),
                new Case("zero QPS", List.of("--controllers=serviceaccounts", "--kube-api-qps=0"),
                        "--kube-api-qps must be a positive number, got 0.0"),
                new Case("NaN QPS", List.of("--controllers=serviceaccounts", "--kube-api-qps=NaN"),
                        "--kube-api-qps must be a positive number, got NaN"),
                new Case("no burst", List.of("--controllers=serviceaccounts", "--kube-api-burst=0"),
                        "--kube-api-burst must be at least 1, got 0"),
                new Case("QPS that is not a number", List.of("--controllers=serviceaccounts", "--kube-api-qps=fast"),
                        "--kube-api-qps"),
                new Case("nothing to run", List.of("--controllers=-*"),
                        "--controllers selects no controller and --webhook-address is not given: nothing to run"),
                new Case("webhook without a certificate", List.of("--controllers=-*", "--webhook-address=:9443"),
                        "--webhook-address needs --tls-cert-file and --tls-private-key-file"),
                new Case("certificate without the webhook", List.of("--controllers=serviceaccounts",
                        "--tls-cert-file", caFile), "need --webhook-address"),
                new Case("certificate that is not PEM", List.of("--controllers=-*", "--webhook-address=127.0.0.1:9443",
                        "--tls-cert-file", "NOTPEM", "--tls-private-key-file", rsaKey), "--tls-cert-file: "),
                new Case("serving key of another certificate", List.of("--controllers=-*",
                        "--webhook-address=127.0.0.1:9443", "--tls-cert-file", caFile, "--tls-private-key-file", rsaKey),
                        "--tls-private-key-file: the key does not belong to the first certificate in --tls-cert-file"),
                new Case("client CA without the webhook", List.of("--controllers=serviceaccounts",
                        "--client-ca-file", caFile), "--client-ca-file needs --webhook-address"),
                new Case("client CA that is not PEM", List.of("--controllers=-*", "--webhook-address=127.0.0.1:9443",
                        "--tls-cert-file", "TLSCERT", "--tls-private-key-file", "TLSKEY",
                        "--agent-service-account=satoken-system/satoken-agent", "--client-ca-file", "NOTPEM"),
                        "--client-ca-file: "),
                new Case("bad webhook address", List.of("--controllers=-*", "--webhook-address=9443",
                        "--tls-cert-file", caFile, "--tls-private-key-file", rsaKey),
                        "--webhook-address: expected HOST:PORT, got \"9443\""),
                // the token Secret volume (AD-11) needed list and watch of every Secret; the flag that chose it
                // had one value left, and is gone
                new Case("removed token volume flag", List.of("--controllers=-*", "--webhook-address=127.0.0.1:9443",
                        "--tls-cert-file", caFile, "--tls-private-key-file", rsaKey, "--admission-token-volume=secret",
                        "--agent-service-account=satoken-system/satoken-agent"),
                        "unknown option '--admission-token-volume'"),
                new Case("agent account without a namespace", List.of("--controllers=-*",
                        "--webhook-address=127.0.0.1:9443", "--tls-cert-file", caFile, "--tls-private-key-file", rsaKey,
                        "--agent-service-account=satoken-agent"),
                        "--agent-service-account: expected NAMESPACE/NAME, got \"satoken-agent\""),
                new Case("unknown webhook", List.of("--controllers=-*", "--webhook-address=127.0.0.1:9443",
                        "--tls-cert-file", caFile, "--tls-private-key-file", rsaKey, "--webhooks=pods,bogus"),
                        "--webhooks: unknown webhook \"bogus\"; the webhooks are agent-tokens, pods, serviceaccount-token"),
                // no fail-open: the token check may not run without the account whose requests it confines
                new Case("token webhook by default without the agent account", List.of("--controllers=-*",
                        "--webhook-address=127.0.0.1:9443", "--tls-cert-file", "TLSCERT", "--tls-private-key-file",
                        "TLSKEY"), "--webhooks serves serviceaccount-token, which needs --agent-service-account "
                        + "NAMESPACE/NAME"),
                new Case("token webhook selected without the agent account", List.of("--controllers=-*",
                        "--webhook-address=127.0.0.1:9443", "--tls-cert-file", "TLSCERT", "--tls-private-key-file",
                        "TLSKEY", "--webhooks=serviceaccount-token"), "give it, or serve only the pod webhook: "
                        + "--webhooks=pods"),
                new Case("empty API audience", List.of("--controllers=-*", "--webhook-address=127.0.0.1:9443",
                        "--tls-cert-file", "TLSCERT", "--tls-private-key-file", "TLSKEY",
                        "--agent-service-account=satoken-system/satoken-agent", "--api-audiences=a,,b"),
                        "--api-audiences: expected a comma-separated list of audiences, got [a, , b]"),
                // the hostPath delivery it configured is gone: an old Deployment's flag is named, not ignored
                new Case("agent root dir of the removed hostPath delivery", List.of("--controllers=-*",
                        "--webhook-address=127.0.0.1:9443", "--tls-cert-file", caFile, "--tls-private-key-file", rsaKey,
                        "--agent-root-dir=/var/lib/satoken"), "unknown option '--agent-root-dir'"));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource
    void badInput(Case c) {
        List<String> args = new ArrayList<>(List.of("run"));
        c.args().forEach(a -> args.add(switch (a) {
            case "NOTPEM" -> tmp.resolve("not-pem.crt").toString();
            case "TLSCERT" -> serving.cert().toString();
            case "TLSKEY" -> serving.key().toString();
            default -> a;
        }));
        StringWriter err = new StringWriter();

        int code = ControlplaneCommand.execute(new PrintWriter(new StringWriter()), new PrintWriter(err, true),
                args.toArray(String[]::new));

        assertThat(code).isEqualTo(2);
        assertThat(err.toString()).contains(c.expectedError()).doesNotContain("MII"); // never key material
        assertThat(err.toString().lines()).allMatch(line -> line.startsWith("satoken-controlplane run: "));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("badInput")
    void badInput_validateReportsTheSame(Case c) {
        List<String> args = new ArrayList<>(List.of("validate"));
        c.args().forEach(a -> args.add(switch (a) {
            case "NOTPEM" -> tmp.resolve("not-pem.crt").toString();
            case "TLSCERT" -> serving.cert().toString();
            case "TLSKEY" -> serving.key().toString();
            default -> a;
        }));
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();

        int code = ControlplaneCommand.execute(new PrintWriter(out), new PrintWriter(err, true),
                args.toArray(String[]::new));

        assertThat(code).isEqualTo(2);
        assertThat(out.toString()).isEmpty();
        assertThat(err.toString()).contains(c.expectedError()).doesNotContain("MII");
    }
}
