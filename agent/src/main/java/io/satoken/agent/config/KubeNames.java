package io.satoken.agent.config;

import io.satoken.common.projection.FieldErrors;
import java.util.regex.Pattern;

/**
 * Kubernetes' name rules, with its messages: a namespace is a DNS-1123 label, a service account a
 * DNS-1123 subdomain.
 */
final class KubeNames {

    static final int LABEL_MAX = 63;
    static final int SUBDOMAIN_MAX = 253;

    private static final String LABEL = "[a-z0-9]([-a-z0-9]*[a-z0-9])?";
    private static final Pattern LABEL_PATTERN = Pattern.compile(LABEL);
    private static final Pattern SUBDOMAIN_PATTERN = Pattern.compile(LABEL + "(\\." + LABEL + ")*");

    private KubeNames() {
    }

    /** Checks a DNS-1123 label such as a namespace; records the error and returns false if it is not one. */
    static boolean label(String value, String field, FieldErrors errors) {
        if (value.length() > LABEL_MAX) {
            errors.invalid(field, "must be no more than " + LABEL_MAX + " characters", value);
            return false;
        }
        if (!LABEL_PATTERN.matcher(value).matches()) {
            errors.invalid(field, "a lowercase RFC 1123 label must consist of lower case alphanumeric characters"
                    + " or '-', and must start and end with an alphanumeric character", value);
            return false;
        }
        return true;
    }

    /** Checks a DNS-1123 subdomain such as a service account name. */
    static boolean subdomain(String value, String field, FieldErrors errors) {
        if (value.length() > SUBDOMAIN_MAX) {
            errors.invalid(field, "must be no more than " + SUBDOMAIN_MAX + " characters", value);
            return false;
        }
        if (!SUBDOMAIN_PATTERN.matcher(value).matches()) {
            errors.invalid(field, "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric"
                    + " characters, '-' or '.', and must start and end with an alphanumeric character", value);
            return false;
        }
        return true;
    }
}
