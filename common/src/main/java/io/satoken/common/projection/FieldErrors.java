package io.satoken.common.projection;

import java.math.BigInteger;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;

/**
 * The validation errors of one parsed document. Each names the field, the rule it broke and the
 * offending value: {@code satoken.io/projections[2].path: must be a relative path, got "/etc"}.
 *
 * <p>Every error is kept, as Kubernetes' {@code field.ErrorList} keeps them, so one report shows all
 * the mistakes in a document; only the first broken rule of each field is reported.
 *
 * <p>Public for the agent's config parser, whose messages follow the same form.
 */
public final class FieldErrors {

    /** Offending values are cut to this many characters, so a message stays short. */
    static final int VALUE_LIMIT = 64;
    /** A message lists at most this many errors and counts the rest. */
    static final int MESSAGE_LIMIT = 10;

    private final List<String> errors = new ArrayList<>();

    /** PV-6 wording: the field is missing, null or empty. */
    public void required(String field) {
        errors.add(field + ": Required value");
    }

    /** {@code field: rule, got value}. */
    public void invalid(String field, String rule, Object value) {
        errors.add(field + ": " + rule + ", got " + describe(value));
    }

    /** {@code field: text}, for errors whose text says all (limits, conflicts between fields). */
    public void add(String field, String text) {
        errors.add(field + ": " + text);
    }

    public boolean isEmpty() {
        return errors.isEmpty();
    }

    public List<String> list() {
        return List.copyOf(errors);
    }

    /** The errors joined with "; ", the first {@link #MESSAGE_LIMIT} of them. */
    public static String message(List<String> errors) {
        if (errors.size() <= MESSAGE_LIMIT) {
            return String.join("; ", errors);
        }
        return String.join("; ", errors.subList(0, MESSAGE_LIMIT))
                + "; and " + (errors.size() - MESSAGE_LIMIT) + " more errors";
    }

    /**
     * A value as a message shows it: strings quoted and escaped, numbers and booleans as written,
     * collections by their kind only. Never calls a collection's toString: an aliased YAML list may
     * contain itself, and a big one would flood the message.
     */
    static String describe(Object value) {
        if (value == null) {
            return "null";
        }
        if (value instanceof String s) {
            return quote(s);
        }
        if (value instanceof Boolean || value instanceof Integer || value instanceof Long
                || value instanceof BigInteger || value instanceof Double || value instanceof Float) {
            return truncate(value.toString());
        }
        if (value instanceof Map<?, ?>) {
            return "a map";
        }
        if (value instanceof List<?>) {
            return "a list";
        }
        if (value instanceof Collection<?>) {
            return "a set";
        }
        if (value instanceof byte[]) {
            return "binary data";
        }
        if (value instanceof java.util.Date) {
            return "a timestamp";
        }
        return "a value of another kind";
    }

    /** {@code s} in double quotes, escaped like Go's %q so a message stays on one line. */
    public static String quote(String s) {
        String shown = truncate(s);
        StringBuilder b = new StringBuilder(shown.length() + 2).append('"');
        for (int i = 0; i < shown.length(); i++) {
            char c = shown.charAt(i);
            switch (c) {
                case '"' -> b.append("\\\"");
                case '\\' -> b.append("\\\\");
                case '\n' -> b.append("\\n");
                case '\r' -> b.append("\\r");
                case '\t' -> b.append("\\t");
                default -> {
                    if (c < 0x20 || c == 0x7f) {
                        b.append(String.format("\\u%04x", (int) c));
                    } else {
                        b.append(c);
                    }
                }
            }
        }
        b.append('"');
        if (s.length() > VALUE_LIMIT) {
            b.append(" (").append(s.length()).append(" characters)");
        }
        return b.toString();
    }

    private static String truncate(String s) {
        if (s.length() <= VALUE_LIMIT) {
            return s;
        }
        int end = Character.isHighSurrogate(s.charAt(VALUE_LIMIT - 1)) ? VALUE_LIMIT - 1 : VALUE_LIMIT;
        return s.substring(0, end) + "...";
    }
}
