package io.satoken.agent.projection;

import io.satoken.agent.token.TokenKey;
import java.nio.file.Path;
import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Objects;
import java.util.Set;

/**
 * A directory whose token files are written together as one atomic payload (a pod's directory, or
 * one static target).
 *
 * @param name identifies the directory to the scheduler (a pod UID, a config entry name)
 * @param dir where the files go; it must exist
 * @param projections the files, with distinct paths
 */
public record TokenDirectory(String name, Path dir, List<Projection> projections) {

    public TokenDirectory {
        Objects.requireNonNull(name, "name");
        Objects.requireNonNull(dir, "dir");
        projections = List.copyOf(projections);
        Set<String> paths = new HashSet<>();
        for (int i = 0; i < projections.size(); i++) {
            String path = projections.get(i).path();
            if (!paths.add(path)) {
                throw new IllegalArgumentException(
                        "projections[" + i + "].path: duplicate path \"" + path + "\" in " + name);
            }
        }
    }

    /** The distinct tokens this directory needs, in first-use order. */
    public Set<TokenKey> keys() {
        Set<TokenKey> keys = new LinkedHashSet<>();
        projections.forEach(p -> keys.add(p.key()));
        return keys;
    }
}
