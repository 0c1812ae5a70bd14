package io.satoken.common.projection;

import java.util.List;

/**
 * The one reader of a token file's fields, wherever a file is asked for: an entry of the
 * {@value ProjectionAnnotation#NAME} format (a pod's annotation, a CSI volume's {@code projections} list), a CSI
 * volume's single-file attributes, and the agent's static config, whose entries share {@code expirationSeconds},
 * {@code mode}, {@code uid} and {@code gid}. Each field has its rule here once; a new field of a file is read here
 * and carried by {@link ProjectionSpec}.
 */
public final class TokenFileFields {

    public static final String PATH = "path";
    public static final String AUDIENCE = "audience";
    public static final String EXPIRATION_SECONDS = "expirationSeconds";
    public static final String MODE = "mode";
    public static final String UID = "uid";
    public static final String GID = "gid";
    /** Every field of a file, as the {@value ProjectionAnnotation#NAME} format lists them. */
    public static final List<String> KEYS = List.of(PATH, AUDIENCE, EXPIRATION_SECONDS, MODE, UID, GID);

    private TokenFileFields() {
    }

    /**
     * One file; null when a field is invalid (the error is in {@code fields}' errors).
     *
     * @param paths the paths of the files before it in the same directory (PV-6, PV-7, AW-15)
     * @param defaultPath the path when none is given, or null when the path is required
     */
    static ProjectionSpec read(YamlFields fields, TokenFilePaths paths, String defaultPath) {
        // PV-6, PV-7, AW-15; a non-string is reported by string() and gives null
        Object given = fields.raw(PATH);
        String path = given == null || given instanceof String
                ? paths.add(given == null ? defaultPath : (String) given, fields.field(PATH))
                : fields.string(PATH);
        // PV-8: any string; none, or "", asks for the API server's own (TokenAsk)
        String audience = fields.string(AUDIENCE);
        Long expirationSeconds = expirationSeconds(fields);
        Integer mode = mode(fields);
        Integer uid = uid(fields);
        Integer gid = gid(fields);
        if (path == null) {
            return null;
        }
        return new ProjectionSpec(path, audience,
                expirationSeconds == null ? ProjectionSpec.DEFAULT_EXPIRATION_SECONDS : expirationSeconds,
                mode, uid, gid);
    }

    /** PV-4, PV-5: 600 .. 2^32 seconds; null when absent (PV-2: the caller's default) or invalid. */
    public static Long expirationSeconds(YamlFields fields) {
        return fields.integer(EXPIRATION_SECONDS, ProjectionAnnotation.MIN_EXPIRATION_SECONDS, ProjectionAnnotation.PV4,
                ProjectionAnnotation.MAX_EXPIRATION_SECONDS, ProjectionAnnotation.PV5);
    }

    /** PV-11: 0..0777; null when absent or invalid. */
    public static Integer mode(YamlFields fields) {
        return fields.mode(MODE);
    }

    /** The file's owner, 0..2^31-1; null when absent or invalid. */
    public static Integer uid(YamlFields fields) {
        return fields.id(UID);
    }

    /** The file's group, 0..2^31-1; null when absent or invalid. */
    public static Integer gid(YamlFields fields) {
        return fields.id(GID);
    }
}
