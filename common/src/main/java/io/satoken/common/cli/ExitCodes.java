package io.satoken.common.cli;

import java.io.PrintWriter;
import picocli.CommandLine;

/**
 * How every satoken command line reports failure: one line on stderr per problem, naming the command (a
 * command that checks everything before it starts reports all it found, see {@link UsageErrors}), and exit 0
 * success, 1 the command failed, 2 bad usage (a bad flag, or a config, key or CA file found bad only when the
 * command ran). No usage dump; {@code --help} has it.
 */
public final class ExitCodes {

    private ExitCodes() {
    }

    /** Runs {@code cli} with those rules, writing to {@code out} and {@code err}. */
    public static int execute(CommandLine cli, PrintWriter out, PrintWriter err, String... args) {
        cli.setOut(out);
        cli.setErr(err);
        cli.setParameterExceptionHandler(ExitCodes::usageError);
        cli.setExecutionExceptionHandler((e, commandLine, parseResult) -> {
            commandLine.getErr().println(commandLine.getCommandSpec().qualifiedName() + ": " + e.getMessage());
            return e instanceof CommandLine.ParameterException ? CommandLine.ExitCode.USAGE : 1;
        });
        return cli.execute(args);
    }

    /** picocli's handler of bad usage, also of a ParameterException a command throws (as UsageErrors). */
    private static int usageError(CommandLine.ParameterException e, String[] args) {
        CommandLine cmd = e.getCommandLine();
        if (e instanceof UsageErrors all) { // its lines are complete; --help would not fix a bad file
            all.errors().forEach(error -> cmd.getErr().println(cmd.getCommandSpec().qualifiedName() + ": " + error));
            return CommandLine.ExitCode.USAGE;
        }
        cmd.getErr().println(cmd.getCommandSpec().qualifiedName() + ": " + e.getMessage()
                + " (see '" + cmd.getCommandSpec().qualifiedName() + " --help')");
        return CommandLine.ExitCode.USAGE;
    }
}
