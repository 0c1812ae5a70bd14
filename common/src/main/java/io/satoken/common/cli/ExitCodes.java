package io.satoken.common.cli;

import io.satoken.common.paths.FileErrors;
import java.io.IOException;
import java.io.PrintWriter;
import java.nio.file.FileSystemException;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Optional;
import java.util.TreeSet;
import org.slf4j.LoggerFactory;
import picocli.CommandLine;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Model.OptionSpec;

/**
 * How every satoken command line reports failure: one line on stderr per problem, naming the command (a
 * command that checks everything before it starts reports all it found, see {@link UsageErrors}), and exit 0
 * success, 1 the command failed, 2 bad usage (a bad flag, or a config, key or CA file found bad only when the
 * command ran). No usage dump; {@code --help} has it. An option the command does not have is named first, with
 * the command's option closest to it ({@code --confg}: did you mean {@code --config}), before what it caused; a
 * file that cannot be read is named with the reason ({@link FileErrors}); no line carries a Java class name.
 */
public final class ExitCodes {

    private ExitCodes() {
    }

    /** Runs {@code cli} with those rules, writing to {@code out} and {@code err}; help shows {@link ExampleFooter}s. */
    public static int execute(CommandLine cli, PrintWriter out, PrintWriter err, String... args) {
        ExampleFooter.install(cli);
        cli.setOut(out);
        cli.setErr(err);
        cli.setParameterExceptionHandler(ExitCodes::usageError);
        cli.setExecutionExceptionHandler((e, commandLine, parseResult) -> {
            commandLine.getErr().println(commandLine.getCommandSpec().qualifiedName() + ": " + failure(e));
            return e instanceof CommandLine.ParameterException ? CommandLine.ExitCode.USAGE : 1;
        });
        return cli.execute(args);
    }

    /** What a command's failure says: its message, a file's reason, never a bare path or a class name. */
    static String failure(Exception e) {
        if (e instanceof FileSystemException || e instanceof IOException && e.getMessage() == null) {
            return FileErrors.describe((IOException) e);
        }
        if (e.getMessage() == null || e.getMessage().isBlank()) {
            LoggerFactory.getLogger(ExitCodes.class).debug("the command failed", e);
            return "internal error (--log-level debug logs where)";
        }
        return e.getMessage();
    }

    /** picocli's handler of bad usage, also of a ParameterException a command throws (as UsageErrors). */
    private static int usageError(CommandLine.ParameterException e, String[] args) {
        CommandLine cmd = e.getCommandLine();
        String name = cmd.getCommandSpec().qualifiedName();
        if (e instanceof UsageErrors all) { // its lines are complete; --help would not fix a bad file
            all.errors().forEach(error -> cmd.getErr().println(name + ": " + error));
            return CommandLine.ExitCode.USAGE;
        }
        List<String> unknown = unknownArguments(cmd.getCommandSpec().root(), args);
        unknown.forEach(line -> cmd.getErr().println(name + ": " + line));
        if (unknown.isEmpty() || !(e instanceof CommandLine.UnmatchedArgumentException)) {
            cmd.getErr().println(name + ": " + e.getMessage() + " (see '" + name + " --help')");
        }
        return CommandLine.ExitCode.USAGE;
    }

    /**
     * One line for each argument the command cannot take: an option it does not have, with the closest one it
     * has, or a word where it takes none, with its subcommands. Arguments after {@code --} are left alone.
     */
    static List<String> unknownArguments(CommandSpec spec, String[] args) {
        CommandSpec command = spec;
        List<String> lines = new ArrayList<>();
        for (int i = 0; i < args.length; i++) {
            String arg = args[i];
            if (arg.equals("--")) {
                break;
            }
            if (command.subcommands().containsKey(arg)) {
                command = command.subcommands().get(arg).getCommandSpec();
                continue;
            }
            if (arg.startsWith("-")) {
                String option = arg.contains("=") ? arg.substring(0, arg.indexOf('=')) : arg;
                OptionSpec known = command.findOption(option);
                if (known == null && arg.startsWith("--")) {
                    lines.add("unknown option '" + option + "'" + closest(option, longOptions(command))
                            .map(name -> " (did you mean " + name + "?)").orElse(""));
                } else if (known != null && known.arity().max() > 0 && !arg.contains("=")) {
                    i++; // its value
                }
            } else if (command.positionalParameters().isEmpty()) {
                lines.add("unexpected argument '" + arg + "'" + (command.subcommands().isEmpty() ? ""
                        : " (" + command.qualifiedName() + " has: "
                                + String.join(", ", new TreeSet<>(command.subcommands().keySet())) + ")"));
            }
        }
        return lines;
    }

    private static List<String> longOptions(CommandSpec command) {
        List<String> names = new ArrayList<>();
        command.options().forEach(o -> {
            for (String n : o.names()) {
                if (n.startsWith("--")) {
                    names.add(n);
                }
            }
        });
        return names;
    }

    /** The known name within two edits of {@code typed}, the nearest first; none when nothing is that close. */
    static Optional<String> closest(String typed, List<String> known) {
        return known.stream()
                .filter(k -> distance(typed, k) <= 2)
                .min(Comparator.comparingInt((String k) -> distance(typed, k)).thenComparing(k -> k));
    }

    /** Levenshtein distance. */
    private static int distance(String a, String b) {
        int[] previous = new int[b.length() + 1];
        int[] current = new int[b.length() + 1];
        for (int j = 0; j <= b.length(); j++) {
            previous[j] = j;
        }
        for (int i = 1; i <= a.length(); i++) {
            current[0] = i;
            for (int j = 1; j <= b.length(); j++) {
                int substitute = previous[j - 1] + (a.charAt(i - 1) == b.charAt(j - 1) ? 0 : 1);
                current[j] = Math.min(substitute, Math.min(previous[j] + 1, current[j - 1] + 1));
            }
            int[] swap = previous;
            previous = current;
            current = swap;
        }
        return previous[b.length()];
    }
}
