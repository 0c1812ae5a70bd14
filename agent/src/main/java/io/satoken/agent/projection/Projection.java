package io.satoken.agent.projection;

import io.satoken.agent.token.TokenKey;
import io.satoken.agent.write.FileOwnership;
import java.util.Objects;

/**
 * One token file: which token ({@link TokenKey}) goes at which relative path, with what mode and owner.
 *
 * @param path relative path inside its {@link TokenDirectory}, validated by the writer (AW-15)
 * @param mode file mode, 0..0777
 * @param uid file owner, or null to leave it
 * @param gid file group, or null to leave it
 */
public record Projection(TokenKey key, String path, int mode, Integer uid, Integer gid) implements FileOwnership {

    public Projection {
        Objects.requireNonNull(key, "key");
        Objects.requireNonNull(path, "path");
        if (mode < 0 || mode > 0777) {
            throw new IllegalArgumentException("mode: must be between 0 and 0777, got 0" + Integer.toOctalString(mode));
        }
    }
}
