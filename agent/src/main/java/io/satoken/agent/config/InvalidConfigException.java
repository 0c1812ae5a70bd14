package io.satoken.agent.config;

import io.satoken.common.projection.FieldErrors;
import java.util.List;

/**
 * The agent's configuration is not valid. Every error names the field, the rule and the offending
 * value, e.g. {@code projections[1].expirationSeconds: may not specify a duration less than 10
 * minutes, got 60}; a config read from a file has the file's name in front.
 */
public class InvalidConfigException extends Exception {

    private final List<String> errors;

    /** @param source where the config came from (a file name), or null */
    public InvalidConfigException(String source, List<String> errors) {
        super((source == null ? "" : source + ": ") + FieldErrors.message(errors));
        if (errors.isEmpty()) {
            throw new IllegalArgumentException("errors: must not be empty");
        }
        this.errors = List.copyOf(errors);
    }

    /** Each error on its own, without the source; {@link #getMessage()} joins them (the first ten). */
    public List<String> errors() {
        return errors;
    }
}
