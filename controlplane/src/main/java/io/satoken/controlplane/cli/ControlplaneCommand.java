package io.satoken.controlplane.cli;

import java.io.PrintWriter;
import picocli.CommandLine;
import picocli.CommandLine.Command;

/** {@code satoken-controlplane}: the control plane's command line. */
@Command(
        name = "satoken-controlplane",
        mixinStandardHelpOptions = true,
        versionProvider = ControlplaneCommand.Version.class,
        description = "Runs the ServiceAccount controllers (legacy tokens, default ServiceAccounts, kube-root-ca.crt,"
                + " ClusterRole aggregation) with leader election.",
        subcommands = {RunCommand.class})
public final class ControlplaneCommand implements Runnable {

    @CommandLine.Spec
    CommandLine.Model.CommandSpec spec;

    @Override
    public void run() {
        throw new CommandLine.ParameterException(spec.commandLine(), "a command is required (run)");
    }

    public static void main(String[] args) {
        System.exit(execute(new PrintWriter(System.out, true), new PrintWriter(System.err, true), args));
    }

    /** Runs the command line in-process. Exit codes: 0 success, 1 the command failed, 2 bad usage. */
    public static int execute(PrintWriter out, PrintWriter err, String... args) {
        CommandLine cli = new CommandLine(new ControlplaneCommand());
        cli.setOut(out);
        cli.setErr(err);
        cli.setParameterExceptionHandler(ControlplaneCommand::usageError);
        cli.setExecutionExceptionHandler((e, commandLine, parseResult) -> {
            commandLine.getErr().println(commandLine.getCommandSpec().qualifiedName() + ": " + e.getMessage());
            // a key or CA file found bad only when the command ran is still bad usage
            return e instanceof CommandLine.ParameterException ? CommandLine.ExitCode.USAGE : 1;
        });
        return cli.execute(args);
    }

    /** Bad flags: one line naming the problem, exit 2 (no usage dump; {@code --help} has it). */
    private static int usageError(CommandLine.ParameterException e, String[] args) {
        CommandLine cmd = e.getCommandLine();
        cmd.getErr().println(cmd.getCommandSpec().qualifiedName() + ": " + e.getMessage()
                + " (see '" + cmd.getCommandSpec().qualifiedName() + " --help')");
        return CommandLine.ExitCode.USAGE;
    }

    static final class Version implements CommandLine.IVersionProvider {
        @Override
        public String[] getVersion() {
            String v = ControlplaneCommand.class.getPackage().getImplementationVersion();
            return new String[] {"satoken-controlplane " + (v == null ? "dev" : v)};
        }
    }
}
