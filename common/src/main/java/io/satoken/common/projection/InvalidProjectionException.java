package io.satoken.common.projection;

import java.util.List;

/**
 * A pod's {@code satoken.io/projections} annotation is not valid. The message is meant for the pod's
 * owner (it goes into a Kubernetes Event): every error names the field, the rule and the offending
 * value, e.g. {@code satoken.io/projections[2].path: must be a relative path, got "/etc"}.
 */
public class InvalidProjectionException extends Exception {

    private final List<String> errors;

    public InvalidProjectionException(List<String> errors) {
        super(FieldErrors.message(errors));
        if (errors.isEmpty()) {
            throw new IllegalArgumentException("errors: must not be empty");
        }
        this.errors = List.copyOf(errors);
    }

    /** Each error on its own; {@link #getMessage()} joins them (the first ten). */
    public List<String> errors() {
        return errors;
    }
}
