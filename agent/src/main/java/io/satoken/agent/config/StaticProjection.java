package io.satoken.agent.config;

import io.satoken.agent.projection.Projection;
import io.satoken.agent.token.BoundObjectRef;
import io.satoken.agent.token.TokenKey;
import io.satoken.common.projection.TokenAsk;
import java.nio.file.Path;
import java.util.Objects;

/**
 * One token file of the agent's static configuration (systemd mode): an unbound token of a given
 * service account, written to {@code <dir>/<file>} with a fixed mode and owner.
 *
 * @param ask the audiences to request, in order, or none for the API server's own (PV-3); the lifetime, 600 (PV-4)
 *     up to the config's maxUnboundExpirationSeconds
 * @param dir the absolute directory the file goes in; files of one dir are written together
 * @param file the file's cleaned relative path inside {@code dir}
 * @param mode the file mode, 0..0777
 * @param uid the file's owner, or null to leave it
 * @param gid the file's group, or null to leave it
 */
public record StaticProjection(String namespace, String serviceAccount, TokenAsk ask, Path dir, String file, int mode,
        Integer uid, Integer gid) {

    /** The file name when the entry gives none. */
    public static final String DEFAULT_FILE = "token";
    /** Host files get the narrowest mode that works, unless the entry says otherwise. */
    public static final int DEFAULT_MODE = 0600;

    public StaticProjection {
        Objects.requireNonNull(namespace, "namespace");
        Objects.requireNonNull(serviceAccount, "serviceAccount");
        Objects.requireNonNull(ask, "ask");
        Objects.requireNonNull(dir, "dir");
        Objects.requireNonNull(file, "file");
    }

    /** The token this file holds: not bound to any object. */
    public TokenKey key() {
        return TokenKey.of(namespace, serviceAccount, ask, BoundObjectRef.NONE);
    }

    /** The file inside its {@link #dir()}. */
    public Projection projection() {
        return new Projection(key(), file, mode, uid, gid);
    }
}
