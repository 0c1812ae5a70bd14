package io.satoken.common.cli;

import java.io.PrintWriter;
import picocli.CommandLine;

/**
 * How every satoken command line reports failure: one line on stderr naming the command and the problem,
 * and exit 0 success, 1 the command failed, 2 bad usage (a bad flag, or a config, key or CA file found bad
 * only when the command ran). No usage dump; {@code --help} has it.
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

    private static int usageError(CommandLine.ParameterException e, String[] args) {
        CommandLine cmd = e.getCommandLine();
        cmd.getErr().println(cmd.getCommandSpec().qualifiedName() + ": " + e.getMessage()
                + " (see '" + cmd.getCommandSpec().qualifiedName() + " --help')");
        return CommandLine.ExitCode.USAGE;
    }
}
