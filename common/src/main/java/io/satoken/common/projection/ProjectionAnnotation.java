package io.satoken.common.projection;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * Parses the pod annotation {@code satoken.io/projections}: a YAML or JSON list of token files the
 * pod asks for.
 *
 * <pre>
 * satoken.io/projections: |
 *   - path: vault/token
 *     audience: https://vault.example.com
 *     expirationSeconds: 1800
 *     mode: 0440
 * </pre>
 *
 * <p>The value is untrusted: its size, nesting and aliases are bounded, and every error names the
 * field, the rule and the offending value, e.g.
 * {@code satoken.io/projections[2].path: must be a relative path, got "/etc"}. All errors of the
 * value are reported together.
 */
public final class ProjectionAnnotation {

    /** The annotation's key. */
    public static final String NAME = "satoken.io/projections";
    /** The most entries one pod may ask for. */
    public static final int MAX_ENTRIES = 64;
    /** Kubernetes' limit on the total size of an object's annotations (256 KiB). */
    public static final int MAX_LENGTH = 256 * 1024;
    /** PV-4: the shortest lifetime, 10 minutes. */
    public static final long MIN_EXPIRATION_SECONDS = 600;
    /** PV-5: the longest lifetime, 2^32 seconds. */
    public static final long MAX_EXPIRATION_SECONDS = 1L << 32;

    /** PV-4's message for a lifetime under {@link #MIN_EXPIRATION_SECONDS}. */
    public static final String PV4 = "may not specify a duration less than 10 minutes";
    /** PV-5's message for a lifetime over {@link #MAX_EXPIRATION_SECONDS}. */
    public static final String PV5 = "may not specify a duration larger than 2^32 seconds";

    private ProjectionAnnotation() {
    }

    /**
     * Parses and validates an annotation value.
     *
     * @return the entries in the order given, paths cleaned, defaults filled in
     * @throws InvalidProjectionException listing every error found
     */
    public static List<ProjectionSpec> parse(String value) throws InvalidProjectionException {
        return parse(value, NAME);
    }

    /**
     * Parses and validates a list in the annotation's format found elsewhere, such as a CSI volume's
     * {@code projections} attribute; errors are named after {@code field}.
     */
    public static List<ProjectionSpec> parse(String value, String field) throws InvalidProjectionException {
        FieldErrors errors = new FieldErrors();
        if (value == null) {
            errors.required(field);
            throw new InvalidProjectionException(errors.list());
        }
        Object document = SafeYaml.load(value, MAX_LENGTH, field, errors);
        if (!errors.isEmpty()) {
            throw new InvalidProjectionException(errors.list());
        }
        if (!(document instanceof List<?> entries)) {
            errors.invalid(field, "must be a non-empty list of maps", document);
            throw new InvalidProjectionException(errors.list());
        }
        if (entries.isEmpty()) {
            errors.add(field, "must be a non-empty list of maps, got an empty list");
        } else if (entries.size() > MAX_ENTRIES) {
            errors.add(field, "must have at most " + MAX_ENTRIES + " entries, got " + entries.size());
        }
        if (!errors.isEmpty()) {
            throw new InvalidProjectionException(errors.list());
        }
        List<ProjectionSpec> specs = new ArrayList<>(entries.size());
        TokenFilePaths paths = new TokenFilePaths(errors);
        for (int i = 0; i < entries.size(); i++) {
            String prefix = field + "[" + i + "]";
            if (entries.get(i) instanceof Map<?, ?> entry) {
                specs.add(TokenFileFields.read(YamlFields.of(entry, prefix, TokenFileFields.KEYS, errors), paths, null));
            } else {
                errors.invalid(prefix, "must be a map", entries.get(i));
            }
        }
        if (!errors.isEmpty()) {
            throw new InvalidProjectionException(errors.list());
        }
        return List.copyOf(specs);
    }
}
