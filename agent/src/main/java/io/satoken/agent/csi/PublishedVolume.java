package io.satoken.agent.csi;

import io.satoken.agent.projection.PodIdentity;
import io.satoken.agent.projection.Projection;
import io.satoken.agent.projection.TokenDirectory;
import io.satoken.agent.reload.ReloadRequest;
import java.nio.file.Path;
import java.util.List;
import java.util.Objects;
import java.util.Set;

/**
 * One published volume: what the agent must remember to keep refreshing it after a restart, since the
 * kubelet does not publish a volume twice. It holds where the files go and which tokens they are, never
 * a token.
 *
 * @param volumeId the kubelet's id for this inline volume ({@code csi-<hash>}), unique on the node
 * @param targetPath the tmpfs the files are written to, under {@code <kubeletDir>/pods/<podUID>/}
 * @param pod the pod, as the kubelet named it
 * @param files the token files, with their modes and owners already chosen
 * @param readFiles the paths of the files the pod has been seen reading, so that a restarted agent still knows
 *     which files have a reader to report if it stops re-reading them
 * @param reload the signal to send the pod's container after each rotation, its container checked; or null
 */
public record PublishedVolume(String volumeId, Path targetPath, PodIdentity pod, List<Projection> files,
        Set<String> readFiles, ReloadRequest reload) {

    /** Directory names of CSI volumes in the scheduler start with this. */
    public static final String DIR_PREFIX = "csi:";

    public PublishedVolume {
        Objects.requireNonNull(volumeId, "volumeId");
        Objects.requireNonNull(targetPath, "targetPath");
        Objects.requireNonNull(pod, "pod");
        files = List.copyOf(files);
        readFiles = Set.copyOf(readFiles);
    }

    public PublishedVolume(String volumeId, Path targetPath, PodIdentity pod, List<Projection> files,
            Set<String> readFiles) {
        this(volumeId, targetPath, pod, files, readFiles, null);
    }

    /** A volume no file of which has been seen read yet. */
    public PublishedVolume(String volumeId, Path targetPath, PodIdentity pod, List<Projection> files) {
        this(volumeId, targetPath, pod, files, Set.of());
    }

    /** The files as the scheduler keeps them. */
    public TokenDirectory directory() {
        return new TokenDirectory(DIR_PREFIX + volumeId, targetPath, files);
    }
}
