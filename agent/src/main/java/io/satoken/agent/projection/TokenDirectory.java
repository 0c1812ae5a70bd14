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
 * @param name identifies the directory to the scheduler (a CSI volume, a config entry name)
 * @param dir where the files go; it must exist
 * @param projections the files, with distinct paths
 * @param owner the CSI volume the directory is and the pod it belongs to, as the kubelet named them when it
 *     published the volume; null for a directory of no pod (static mode). Whoever reports on the directory (a
 *     Warning Event, {@code explain}, the record of which files have a reader) finds them here
 */
public record TokenDirectory(String name, Path dir, List<Projection> projections, Owner owner) {

    /** A CSI volume's id and its pod. */
    public record Owner(String volumeId, PodIdentity pod) {
        public Owner {
            Objects.requireNonNull(volumeId, "volumeId");
            Objects.requireNonNull(pod, "pod");
        }
    }

    /** A directory of no pod. */
    public TokenDirectory(String name, Path dir, List<Projection> projections) {
        this(name, dir, projections, null);
    }

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

    /** The pod whose files these are, or null for a directory of no pod. */
    public PodIdentity pod() {
        return owner == null ? null : owner.pod();
    }

    /** The distinct tokens this directory needs, in first-use order. */
    public Set<TokenKey> keys() {
        Set<TokenKey> keys = new LinkedHashSet<>();
        projections.forEach(p -> keys.add(p.key()));
        return keys;
    }
}
