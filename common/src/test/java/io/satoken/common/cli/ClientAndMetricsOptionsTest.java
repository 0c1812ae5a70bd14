package io.satoken.common.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;
import picocli.CommandLine.Command;

/** The shared {@code --kubeconfig} and {@code --metrics-address}: each program's default, its help, its checks. */
class ClientAndMetricsOptionsTest {

    @TempDir
    Path tmp;

    @Command(name = "run", mixinStandardHelpOptions = true)
    static final class Run implements Runnable {
        @CommandLine.Mixin
        ClientAndMetricsOptions options = new ClientAndMetricsOptions("127.0.0.1:9810");

        @Override
        public void run() {
        }
    }

    private static Run parse(String... args) {
        Run run = new Run();
        new CommandLine(run).parseArgs(args);
        return run;
    }

    @Test
    void metricsAddress_defaultIsTheOneTheCommandGives() {
        List<String> errors = new ArrayList<>();

        assertThat(parse().options.metricsAddress(errors)).isEqualTo(new InetSocketAddress("127.0.0.1", 9810));
        assertThat(parse("--metrics-address=0.0.0.0:10260").options.metricsAddress(errors))
                .isEqualTo(new InetSocketAddress("0.0.0.0", 10260));
        assertThat(errors).isEmpty();
    }

    @Test
    void metricsAddress_badOneIsAnErrorNamingTheFlag() {
        List<String> errors = new ArrayList<>();

        assertThat(parse("--metrics-address", "9810").options.metricsAddress(errors)).isNull();

        assertThat(errors).containsExactly("--metrics-address: expected HOST:PORT, got \"9810\"");
    }

    @Test
    void help_showsBothFlagsAndTheCommandsDefault() {
        String help = new CommandLine(new Run()).getUsageMessage(CommandLine.Help.Ansi.OFF);

        assertThat(help).contains("--kubeconfig=FILE", "default: in-cluster, then", "~/.kube/config",
                "--metrics-address=HOST:PORT", "(default: 127.0.0.1:9810)");
    }

    @Test
    void kubeconfig_notGivenIsNullAndNotChecked() {
        Run run = parse();
        List<String> errors = new ArrayList<>();

        run.options.checkKubeconfig(errors);

        assertThat(run.options.kubeconfig()).isNull();
        assertThat(errors).isEmpty();
    }

    @Test
    void kubeconfig_givenIsReadAndItsErrorAdded() throws Exception {
        Path broken = Files.writeString(tmp.resolve("kubeconfig"), "users: [{name: u, user: {token: s3cret\n");
        Run run = parse("--kubeconfig", broken.toString());
        List<String> errors = new ArrayList<>();

        run.options.checkKubeconfig(errors);

        assertThat(run.options.kubeconfig()).isEqualTo(broken);
        assertThat(errors).singleElement().asString()
                .startsWith("kubeconfig " + broken + ": not a valid kubeconfig").doesNotContain("s3cret");
    }
}
