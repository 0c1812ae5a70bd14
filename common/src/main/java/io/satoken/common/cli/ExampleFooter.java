package io.satoken.common.cli;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import picocli.CommandLine;

/**
 * Lays out the "Examples:" footer of every command's {@code --help}, so that a command's annotation writes each
 * example once, as a shell would read it: a {@code # what it does} line and the command on one line. The footer
 * indents both and breaks a command longer than {@value #WIDTH} columns before an argument, a flag and its value
 * kept together, ending each broken line with {@code \} as a shell continues it. A line that is already indented is
 * shown as written.
 */
public final class ExampleFooter implements CommandLine.IHelpSectionRenderer {

    /** The widest a laid-out line grows before the command breaks; an argument longer than that stands alone. */
    static final int WIDTH = 72;

    private static final String INDENT = "  ";
    private static final String CONTINUED = "      ";

    private ExampleFooter() {
    }

    /** Lays out the footers of {@code cli} and of its subcommands. */
    static void install(CommandLine cli) {
        Map<String, CommandLine.IHelpSectionRenderer> sections = new LinkedHashMap<>(cli.getHelpSectionMap());
        sections.put(CommandLine.Model.UsageMessageSpec.SECTION_KEY_FOOTER, new ExampleFooter());
        cli.setHelpSectionMap(sections);
    }

    @Override
    public String render(CommandLine.Help help) {
        StringBuilder out = new StringBuilder();
        for (String line : help.commandSpec().usageMessage().footer()) {
            for (String laidOut : layout(line)) {
                out.append(laidOut).append(System.lineSeparator());
            }
        }
        return out.toString();
    }

    /** The lines one footer entry is shown as. */
    static List<String> layout(String entry) {
        if (entry.isEmpty() || Character.isWhitespace(entry.charAt(0))) {
            return List.of(entry);
        }
        if (entry.startsWith("#")) {
            return List.of(INDENT + entry);
        }
        List<String> lines = new ArrayList<>();
        StringBuilder line = new StringBuilder(INDENT);
        boolean first = true;
        for (String argument : arguments(entry)) {
            if (!first && line.length() + 1 + argument.length() + 2 > WIDTH) {
                lines.add(line.append(" \\").toString());
                line = new StringBuilder(CONTINUED).append(argument);
            } else {
                line.append(first ? "" : " ").append(argument);
            }
            first = false;
        }
        lines.add(line.toString());
        return lines;
    }

    /** The words of a command, a flag given its value as the next word ({@code --config FILE}) joined to it. */
    private static List<String> arguments(String command) {
        List<String> arguments = new ArrayList<>();
        for (String word : command.trim().split(" +")) {
            int last = arguments.size() - 1;
            String previous = last < 0 ? "" : arguments.get(last);
            if (!word.startsWith("-") && previous.startsWith("--") && !previous.contains("=")
                    && !previous.contains(" ")) {
                arguments.set(last, previous + " " + word);
            } else {
                arguments.add(word);
            }
        }
        return arguments;
    }
}
