package io.satoken.common.kube;

import java.util.Optional;
import java.util.regex.Pattern;

/**
 * Kubernetes' rules for names and labels, with its messages; one place for both programs. A namespace is a
 * DNS-1123 label, a ServiceAccount name a DNS-1123 subdomain; a label key is a qualified name (an optional
 * DNS-1123 subdomain prefix and a slash, then a name of at most 63 characters), a label value is empty or a
 * name-like string of at most 63 characters. Each check answers why the value breaks the rule, or nothing.
 */
public final class KubeNames {

    public static final int LABEL_MAX = 63;
    public static final int SUBDOMAIN_MAX = 253;

    private static final String DNS_LABEL = "[a-z0-9]([-a-z0-9]*[a-z0-9])?";
    private static final Pattern DNS_LABEL_PATTERN = Pattern.compile(DNS_LABEL);
    private static final Pattern DNS_SUBDOMAIN_PATTERN = Pattern.compile(DNS_LABEL + "(\\." + DNS_LABEL + ")*");
    /** A label key's name part, and a non-empty label value. */
    private static final Pattern QUALIFIED_NAME = Pattern.compile("([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]");

    private KubeNames() {
    }

    /** Why {@code value} is not a DNS-1123 label (such as a namespace), or empty when it is one. */
    public static Optional<String> dnsLabelProblem(String value) {
        if (value.length() > LABEL_MAX) {
            return Optional.of("must be no more than " + LABEL_MAX + " characters");
        }
        if (!DNS_LABEL_PATTERN.matcher(value).matches()) {
            return Optional.of("a lowercase RFC 1123 label must consist of lower case alphanumeric characters"
                    + " or '-', and must start and end with an alphanumeric character");
        }
        return Optional.empty();
    }

    /** Why {@code value} is not a DNS-1123 subdomain (such as a ServiceAccount name), or empty when it is one. */
    public static Optional<String> dnsSubdomainProblem(String value) {
        if (value.length() > SUBDOMAIN_MAX) {
            return Optional.of("must be no more than " + SUBDOMAIN_MAX + " characters");
        }
        if (!DNS_SUBDOMAIN_PATTERN.matcher(value).matches()) {
            return Optional.of("a lowercase RFC 1123 subdomain must consist of lower case alphanumeric"
                    + " characters, '-' or '.', and must start and end with an alphanumeric character");
        }
        return Optional.empty();
    }

    /** Why {@code key} is not a valid label key, or empty when it is. */
    public static Optional<String> labelKeyProblem(String key) {
        String[] parts = key.split("/", -1);
        if (parts.length > 2) {
            return Optional.of("must be a name with at most one '/' prefix separator");
        }
        if (parts.length == 2) {
            String prefix = parts[0];
            if (prefix.isEmpty()) {
                return Optional.of("prefix part must be non-empty");
            }
            if (prefix.length() > SUBDOMAIN_MAX) {
                return Optional.of("prefix part must be no more than " + SUBDOMAIN_MAX + " characters");
            }
            if (!DNS_SUBDOMAIN_PATTERN.matcher(prefix).matches()) {
                return Optional.of("prefix part must be a lowercase DNS-1123 subdomain");
            }
        }
        String name = parts[parts.length - 1];
        if (name.isEmpty()) {
            return Optional.of("name part must be non-empty");
        }
        if (name.length() > LABEL_MAX) {
            return Optional.of("name part must be no more than " + LABEL_MAX + " characters");
        }
        if (!QUALIFIED_NAME.matcher(name).matches()) {
            return Optional.of("name part must consist of alphanumerics, '-', '_' or '.',"
                    + " and start and end with an alphanumeric");
        }
        return Optional.empty();
    }

    /** Why {@code value} is not a valid label value, or empty when it is. */
    public static Optional<String> labelValueProblem(String value) {
        if (value.length() > LABEL_MAX) {
            return Optional.of("must be no more than " + LABEL_MAX + " characters");
        }
        if (!value.isEmpty() && !QUALIFIED_NAME.matcher(value).matches()) {
            return Optional.of("must be empty or consist of alphanumerics, '-', '_' or '.',"
                    + " and start and end with an alphanumeric");
        }
        return Optional.empty();
    }
}
