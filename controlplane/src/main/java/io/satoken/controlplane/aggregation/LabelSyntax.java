package io.satoken.controlplane.aggregation;

import java.util.Optional;
import java.util.regex.Pattern;

/**
 * The syntax Kubernetes requires of label keys and values: a key is a qualified name (an optional DNS-1123
 * subdomain prefix and a slash, then a name of at most 63 characters), a value is empty or a name-like
 * string of at most 63 characters. A selector that names anything else is invalid.
 */
final class LabelSyntax {

    private static final int NAME_MAX = 63;
    private static final int PREFIX_MAX = 253;
    private static final Pattern NAME = Pattern.compile("([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]");
    private static final Pattern DNS_SUBDOMAIN =
            Pattern.compile("[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*");

    private LabelSyntax() {
    }

    /** Why {@code key} is not a valid label key, or empty when it is. */
    static Optional<String> keyProblem(String key) {
        String[] parts = key.split("/", -1);
        String name;
        if (parts.length == 1) {
            name = parts[0];
        } else if (parts.length == 2) {
            String prefix = parts[0];
            name = parts[1];
            if (prefix.isEmpty()) {
                return Optional.of("prefix part must be non-empty");
            }
            if (prefix.length() > PREFIX_MAX) {
                return Optional.of("prefix part must be no more than " + PREFIX_MAX + " characters");
            }
            if (!DNS_SUBDOMAIN.matcher(prefix).matches()) {
                return Optional.of("prefix part must be a lowercase DNS-1123 subdomain");
            }
        } else {
            return Optional.of("must be a name with at most one '/' prefix separator");
        }
        if (name.isEmpty()) {
            return Optional.of("name part must be non-empty");
        }
        if (name.length() > NAME_MAX) {
            return Optional.of("name part must be no more than " + NAME_MAX + " characters");
        }
        if (!NAME.matcher(name).matches()) {
            return Optional.of("name part must consist of alphanumerics, '-', '_' or '.',"
                    + " and start and end with an alphanumeric");
        }
        return Optional.empty();
    }

    /** Why {@code value} is not a valid label value, or empty when it is. */
    static Optional<String> valueProblem(String value) {
        if (value.length() > NAME_MAX) {
            return Optional.of("must be no more than " + NAME_MAX + " characters");
        }
        if (!value.isEmpty() && !NAME.matcher(value).matches()) {
            return Optional.of("must be empty or consist of alphanumerics, '-', '_' or '.',"
                    + " and start and end with an alphanumeric");
        }
        return Optional.empty();
    }
}
