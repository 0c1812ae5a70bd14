package io.satoken.common.testing;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatCode;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.function.Function;
import java.util.function.Supplier;
import picocli.CommandLine;

/**
 * Reads the "Examples:" section of a command's usage ({@code --help}): the command lines shown, each one list of
 * arguments as a shell would pass them (a {@code \} at a line's end continues it, {@code #} lines are comments,
 * single quotes are removed). The CLI tests parse every example, so that no example shows a flag that does not exist.
 */
public final class HelpExamples {

    private HelpExamples() {
    }

    /**
     * Checks every command of a program: {@code --help} of the program and of each subcommand but {@code help}
     * exits 0 and shows examples, each example starts with {@code program}, a subcommand's examples run that
     * subcommand, and every example parses.
     *
     * @param root makes the program's top command, anew for each parse
     * @param help runs the program with these arguments; returns its exit status and what it printed on stdout
     * @return the subcommands checked, for the caller to say which it expects
     */
    public static List<String> checkEveryCommand(String program, Supplier<Object> root,
            Function<String[], Map.Entry<Integer, String>> help) {
        List<String> commands = new ArrayList<>(List.of(""));
        new CommandLine(root.get()).getSubcommands().keySet().stream().filter(c -> !c.equals("help"))
                .forEach(commands::add);
        for (String command : commands) {
            Map.Entry<Integer, String> shown = help.apply(command.isEmpty() ? new String[] {"--help"}
                    : new String[] {command, "--help"});
            assertThat(shown.getKey()).as(command).isZero();
            List<List<String>> examples = of(shown.getValue());
            assertThat(examples).as("examples of '%s'", command).isNotEmpty();
            if (!command.isEmpty()) {
                assertThat(examples).as("an example of '%s' runs it", command)
                        .anySatisfy(e -> assertThat(e.subList(0, 2)).containsExactly(program, command));
            }
            for (List<String> example : examples) {
                assertThat(example.get(0)).isEqualTo(program);
                List<String> args = example.subList(1, example.size());
                assertThatCode(() -> new CommandLine(root.get()).parseArgs(args.toArray(String[]::new)))
                        .as(String.join(" ", example)).doesNotThrowAnyException();
            }
        }
        return commands.subList(1, commands.size());
    }

    /** The example command lines of {@code usage}; empty when it has no Examples section. */
    public static List<List<String>> of(String usage) {
        int at = usage.indexOf("\nExamples:\n");
        List<List<String>> examples = new ArrayList<>();
        if (at < 0) {
            return examples;
        }
        StringBuilder line = new StringBuilder();
        for (String raw : usage.substring(at + "\nExamples:\n".length()).split("\n")) {
            String text = raw.strip();
            if (text.isEmpty() && line.length() == 0) {
                break; // the section ends at the first blank line
            }
            if (text.startsWith("#")) {
                continue;
            }
            if (text.endsWith("\\")) {
                line.append(text, 0, text.length() - 1).append(' ');
                continue;
            }
            line.append(text);
            examples.add(Arrays.stream(line.toString().trim().split("\\s+"))
                    .map(arg -> arg.replace("'", "")).toList());
            line.setLength(0);
        }
        return examples;
    }
}
