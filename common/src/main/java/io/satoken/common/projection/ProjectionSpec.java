package io.satoken.common.projection;

import java.util.Objects;

/**
 * One entry of the pod annotation {@code satoken.io/projections}: a token file a pod asks for.
 * {@link ProjectionAnnotation#parse} validates entries; the agent's {@code PodProjections} turns them
 * into token files.
 *
 * @param path the file's path inside the pod's token directory, cleaned ({@code ./a//b} is {@code a/b})
 * @param audience the one audience to request; null means none ({@link #ask()}); an empty string is taken as null
 * @param expirationSeconds the requested lifetime, 600..2^32 (PV-4, PV-5), 3600 when not given (PV-2)
 * @param mode the file mode 0..0777 (PV-11), or null for the default (PV-1, PV-16)
 * @param uid the file's owner, or null for the pod's (PV-18)
 * @param gid the file's group, or null for the pod's fsGroup (PV-17)
 */
public record ProjectionSpec(String path, String audience, long expirationSeconds, Integer mode, Integer uid,
        Integer gid) {

    /** PV-2: the lifetime when the entry gives none. */
    public static final long DEFAULT_EXPIRATION_SECONDS = 3600;

    public ProjectionSpec {
        Objects.requireNonNull(path, "path");
        if (TokenAsk.audiences(audience) == null) {
            audience = null; // "" names no audience
        }
        if (mode != null && (mode < 0 || mode > YamlFields.MAX_MODE)) {
            throw new IllegalArgumentException("mode: must be between 0 and 0777, got 0" + Integer.toOctalString(mode));
        }
    }

    /** What the file asks the API server for: its audience, or none for the API server's own (PV-3, PV-14). */
    public TokenAsk ask() {
        return new TokenAsk(TokenAsk.audiences(audience), expirationSeconds);
    }

    /** An entry with only a path: no audience, the default lifetime, mode and owner. */
    public static ProjectionSpec of(String path) {
        return new ProjectionSpec(path, null, DEFAULT_EXPIRATION_SECONDS, null, null, null);
    }
}
