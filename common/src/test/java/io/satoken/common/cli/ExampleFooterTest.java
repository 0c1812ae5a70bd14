package io.satoken.common.cli;

import static org.assertj.core.api.Assertions.assertThat;

import io.satoken.common.testing.HelpExamples;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.util.List;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

class ExampleFooterTest {

    private static final String LONG = "prog run --config /etc/satoken/agent.yaml --kubeconfig /etc/satoken/kubeconfig "
            + "--log-format json --leader-elect-namespace=satoken-controlplane";

    @Test
    void layout_indentsComments_andKeepsAShortCommandOnOneLine() {
        assertThat(ExampleFooter.layout("# what it does")).containsExactly("  # what it does");
        assertThat(ExampleFooter.layout("prog help run")).containsExactly("  prog help run");
    }

    @Test
    void layout_breaksALongCommandBeforeAFlag_keepingTheFlagWithItsValue() {
        List<String> lines = ExampleFooter.layout(LONG);

        assertThat(lines).containsExactly(
                "  prog run --config /etc/satoken/agent.yaml \\",
                "      --kubeconfig /etc/satoken/kubeconfig --log-format json \\",
                "      --leader-elect-namespace=satoken-controlplane");
        assertThat(lines).allSatisfy(line -> assertThat(line.length()).isLessThanOrEqualTo(ExampleFooter.WIDTH));
    }

    @Test
    void layout_showsAnIndentedLineAsWritten() {
        assertThat(ExampleFooter.layout("      --already laid-out \\")).containsExactly("      --already laid-out \\");
    }

    @Command(name = "prog", mixinStandardHelpOptions = true, subcommands = Run.class,
            footerHeading = "%nExamples:%n", footer = {"# top", "prog help run"})
    static final class Prog {
    }

    @Command(name = "run", mixinStandardHelpOptions = true, footerHeading = "%nExamples:%n", footer = {"# long", LONG})
    static final class Run implements Runnable {
        @Option(names = "--config") String config;
        @Option(names = "--kubeconfig") String kubeconfig;
        @Option(names = "--log-format") String logFormat;
        @Option(names = "--leader-elect-namespace") String namespace;

        @Override
        public void run() {
        }
    }

    @Test
    void help_ofEveryCommand_showsTheExamplesAsTheShellReadsThem() {
        StringWriter out = new StringWriter();
        int exit = ExitCodes.execute(new CommandLine(new Prog()), new PrintWriter(out, true),
                new PrintWriter(new StringWriter(), true), "run", "--help");

        assertThat(exit).isZero();
        assertThat(out.toString()).contains("  # long" + System.lineSeparator() + "  prog run --config");
        assertThat(HelpExamples.of(out.toString())).containsExactly(List.of(LONG.split(" ")));
    }
}
