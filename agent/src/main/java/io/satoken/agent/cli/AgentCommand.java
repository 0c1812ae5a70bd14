package io.satoken.agent.cli;

import io.satoken.common.cli.BuildVersion;
import io.satoken.common.cli.ExitCodes;
import java.io.PrintWriter;
import picocli.CommandLine;
import picocli.CommandLine.Command;

/** {@code satoken-agent}: the node agent's command line. */
@Command(
        name = "satoken-agent",
        mixinStandardHelpOptions = true,
        versionProvider = BuildVersion.Provider.class,
        description = "Requests, caches, refreshes and atomically writes Kubernetes ServiceAccount tokens.",
        subcommands = {RunCommand.class, ValidateCommand.class, DemoCommand.class, VerifyCommand.class,
                ExplainCommand.class, CommandLine.HelpCommand.class},
        footerHeading = "%nExamples:%n",
        footer = {
            "  # Without a cluster: three 30s tokens from a local issuer, for 60s",
            "  satoken-agent demo",
            "  # Check a config and run's flags, then run (as satoken-agent.service does)",
            "  satoken-agent validate --config /etc/satoken/agent.yaml \\",
            "      --kubeconfig /etc/satoken/kubeconfig",
            "  satoken-agent run --config /etc/satoken/agent.yaml \\",
            "      --kubeconfig /etc/satoken/kubeconfig",
            "  # What the agent on this node keeps for a pod",
            "  satoken-agent explain --config /etc/satoken/agent.yaml shop/cart-7d9f",
            "  # A command's flags and examples",
            "  satoken-agent help run"})
public final class AgentCommand implements Runnable {

    @CommandLine.Spec
    CommandLine.Model.CommandSpec spec;

    @Override
    public void run() {
        throw new CommandLine.ParameterException(spec.commandLine(),
                "a command is required (run, validate, demo, verify, explain, help)");
    }

    public static void main(String[] args) {
        System.exit(execute(new PrintWriter(System.out, true), new PrintWriter(System.err, true), args));
    }

    /**
     * Runs the command line in-process. Exit codes: 0 success, 1 the command failed, 2 bad usage.
     */
    public static int execute(PrintWriter out, PrintWriter err, String... args) {
        return execute(CommandLine.defaultFactory(), out, err, args);
    }

    /** As {@link #execute(PrintWriter, PrintWriter, String...)}, with commands made by {@code factory} (test seams). */
    static int execute(CommandLine.IFactory factory, PrintWriter out, PrintWriter err, String... args) {
        CommandLine cli = new CommandLine(new AgentCommand(), factory);
        return ExitCodes.execute(cli, out, err, args);
    }
}
