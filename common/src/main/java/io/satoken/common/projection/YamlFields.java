package io.satoken.common.projection;

import java.math.BigInteger;
import java.util.List;
import java.util.Map;
import java.util.regex.Pattern;

/**
 * Typed reads from one YAML map (as {@link SafeYaml} loads it), each recording a failure in a
 * {@link FieldErrors} under the field's path and returning null. A key that is absent and a key
 * whose value is null read the same, as in Kubernetes' JSON.
 *
 * <p>Public for the agent's config parser, which reads its fields with the same rules.
 */
public final class YamlFields {

    /** PV-11: the largest file mode. */
    static final int MAX_MODE = 0777;

    private static final Pattern OCTAL = Pattern.compile("[0-7]+");

    private final Map<?, ?> map;
    private final String prefix;
    private final FieldErrors errors;
    /** whether every value is text, as in a CSI volume's attributes, so numbers are written as strings */
    private final boolean text;

    private YamlFields(Map<?, ?> map, String prefix, FieldErrors errors, boolean text) {
        this.map = map;
        this.prefix = prefix;
        this.errors = errors;
        this.text = text;
    }

    /**
     * Reads from {@code map}, whose path is {@code prefix} ("" for a document's top level); any key not in {@code known} is an error
     * (a typo must not silently drop a setting).
     */
    public static YamlFields of(Map<?, ?> map, String prefix, List<String> known, FieldErrors errors) {
        for (Object key : map.keySet()) {
            if (!(key instanceof String) || !known.contains(key)) {
                errors.add(prefix.isEmpty() ? "top level" : prefix, "unknown key " + FieldErrors.describe(key)
                        + " (known keys: " + String.join(", ", known) + ")");
            }
        }
        return new YamlFields(map, prefix, errors, false);
    }

    /**
     * Reads from a map whose values are all strings, such as a CSI volume's {@code volumeAttributes}: an integer is
     * a string of decimal digits. The caller has checked the keys.
     */
    public static YamlFields ofText(Map<String, String> map, String prefix, FieldErrors errors) {
        return new YamlFields(map, prefix, errors, true);
    }

    /** The path of {@code key}, e.g. {@code satoken.io/projections[2].path}. */
    public String field(String key) {
        return prefix.isEmpty() ? key : prefix + "." + key;
    }

    public boolean has(String key) {
        return map.get(key) != null;
    }

    public Object raw(String key) {
        return map.get(key);
    }

    /** A string, or null when absent or not a string. */
    public String string(String key) {
        Object value = map.get(key);
        if (value == null || value instanceof String) {
            return (String) value;
        }
        errors.invalid(field(key), "must be a string", value);
        return null;
    }

    /** A non-empty string; absent, null and "" are PV-6's "Required value". */
    public String requiredString(String key) {
        Object value = map.get(key);
        if (value == null || "".equals(value)) {
            errors.required(field(key));
            return null;
        }
        return string(key);
    }

    /**
     * An integer in {@code min..max}, or null when absent or invalid. Floats, strings and booleans
     * are not integers; neither is a number too big for a long.
     *
     * @param belowMin the message for a value under {@code min}
     * @param aboveMax the message for a value over {@code max}
     */
    public Long integer(String key, long min, String belowMin, long max, String aboveMax) {
        Object value = map.get(key);
        if (value == null) {
            return null;
        }
        Object number = text && value instanceof String s ? decimal(s) : value;
        Long n = asLong(number);
        if (n == null) {
            errors.invalid(field(key), number instanceof BigInteger ? "must be an integer that fits in 64 bits"
                    : text ? "must be a whole number" : "must be an integer", value);
        } else if (n < min) {
            errors.invalid(field(key), belowMin, value);
        } else if (n > max) {
            errors.invalid(field(key), aboveMax, value);
        } else {
            return n;
        }
        return null;
    }

    /** A file owner or group id: 0..2147483647. */
    public Integer id(String key) {
        String range = "must be between 0 and " + Integer.MAX_VALUE;
        Long n = integer(key, 0, range, Integer.MAX_VALUE, range);
        return n == null ? null : n.intValue();
    }

    /**
     * A file mode, 0..0777 (PV-11). An integer as the document gives it (YAML {@code 0640} is octal,
     * 416; JSON can only say 416), or a string of octal digits such as {@code "0640"}.
     */
    public Integer mode(String key) {
        Object value = map.get(key);
        if (value == null) {
            return null;
        }
        String range = "must be between 0 and 0777 (octal)";
        if (value instanceof String s) {
            if (!OCTAL.matcher(s).matches()) {
                errors.invalid(field(key), range + ", as an integer or a string of octal digits such as \"0640\"", value);
                return null;
            }
            BigInteger n = new BigInteger(s, 8);
            if (n.compareTo(BigInteger.valueOf(MAX_MODE)) > 0) {
                errors.invalid(field(key), range, value);
                return null;
            }
            return n.intValue();
        }
        Long n = asLong(value);
        if (n == null) {
            errors.invalid(field(key), range + ", as an integer or a string of octal digits such as \"0640\"", value);
            return null;
        }
        if (n < 0 || n > MAX_MODE) {
            // a YAML 640 is decimal: show the octal a reader compares with 0777
            errors.add(field(key), range + ", got " + n + (n > 0 ? " (octal 0" + Long.toOctalString(n) + ")" : ""));
            return null;
        }
        return n.intValue();
    }

    /** The number a string of decimal digits (with an optional sign) writes, or the string itself. */
    private static Object decimal(String s) {
        String digits = s.trim();
        try {
            return Long.parseLong(digits);
        } catch (NumberFormatException e) {
            // too big for a long (named so), or not a number at all
        }
        try {
            return new BigInteger(digits);
        } catch (NumberFormatException e) {
            return s;
        }
    }

    /** Integer, Long, or a BigInteger that fits; anything else (floats too) is null. */
    private static Long asLong(Object value) {
        if (value instanceof Integer || value instanceof Long) {
            return ((Number) value).longValue();
        }
        if (value instanceof BigInteger b && b.bitLength() < 64) {
            return b.longValue();
        }
        return null;
    }
}
