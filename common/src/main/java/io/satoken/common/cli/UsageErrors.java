package io.satoken.common.cli;

import java.util.List;
import java.util.function.Supplier;
import picocli.CommandLine;

/**
 * Every bad flag, config, key or CA file a command found before starting, not just the first: {@link ExitCodes}
 * prints each on its own line, naming the command, and exits 2. Each error names the flag or field and the
 * rule it broke, and never quotes key material.
 */
public final class UsageErrors extends CommandLine.ParameterException {

    private final List<String> errors;

    private UsageErrors(CommandLine command, List<String> errors) {
        super(command, String.join("\n", errors));
        this.errors = List.copyOf(errors);
    }

    /** Throws the errors when there are any; returns when {@code errors} is empty. */
    public static void throwIfAny(CommandLine command, List<String> errors) {
        if (!errors.isEmpty()) {
            throw new UsageErrors(command, errors);
        }
    }

    /**
     * The result of one check, or null with its {@link IllegalArgumentException}'s message added to {@code errors}:
     * how a command goes on checking its other flags after one is bad.
     */
    public static <T> T attempt(List<String> errors, Supplier<T> check) {
        try {
            return check.get();
        } catch (IllegalArgumentException e) {
            errors.add(e.getMessage());
            return null;
        }
    }

    /** The errors in the order they were found. */
    public List<String> errors() {
        return errors;
    }
}
