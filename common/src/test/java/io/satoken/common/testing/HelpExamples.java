package io.satoken.common.testing;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * Reads the "Examples:" section of a command's usage ({@code --help}): the command lines shown, each one list of
 * arguments as a shell would pass them (a {@code \} at a line's end continues it, {@code #} lines are comments,
 * single quotes are removed). The CLI tests parse every example, so that no example shows a flag that does not exist.
 */
public final class HelpExamples {

    private HelpExamples() {
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
