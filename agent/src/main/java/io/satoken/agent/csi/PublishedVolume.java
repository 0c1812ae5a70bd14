package io.satoken.agent.csi;

import io.satoken.agent.projection.PodIdentity;
import io.satoken.agent.projection.PodOwners;
import io.satoken.agent.projection.PodProjections;
import io.satoken.agent.projection.Projection;
import io.satoken.agent.projection.TokenDirectory;
import io.satoken.agent.reload.ReloadRequest;
import io.satoken.common.projection.InvalidProjectionException;
import java.nio.file.Path;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;

/**
 * One published volume: what the agent must remember to keep refreshing it after a restart, since the kubelet does
 * not publish a volume twice. What is remembered ({@link VolumeStore}) is what the kubelet sent, verbatim, and what
 * the publish resolved from the pod; the files are read from them again ({@link #of}), the same way a publish reads
 * them, so an attribute the reading learns is kept across a restart without this record knowing it. Never a token.
 *
 * @param volumeId the kubelet's id for this inline volume ({@code csi-<hash>}), unique on the node
 * @param targetPath the tmpfs the files are written to, under {@code <kubeletDir>/pods/<podUID>/}
 * @param attributes the volume context the kubelet sent, pod info included and its tokens left out
 * @param owners the owner and group the pod's securityContext gave the files when it was published
 * @param reloadContainer the container a reload signal goes to, as checked against the pod; or null
 * @param readFiles the paths of the files the pod has been seen reading, so that a restarted agent still knows
 *     which files have a reader to report if it stops re-reading them
 * @param pod the pod, read from {@code attributes}
 * @param files the token files, read from {@code attributes} with {@code owners}
 * @param reload the signal to send {@code reloadContainer} after each rotation; or null
 */
public record PublishedVolume(String volumeId, Path targetPath, Map<String, String> attributes, PodOwners owners,
        String reloadContainer, Set<String> readFiles, PodIdentity pod, List<Projection> files, ReloadRequest reload) {

    /** Directory names of CSI volumes in the scheduler start with this. */
    static final String DIR_PREFIX = "csi:";

    public PublishedVolume {
        Objects.requireNonNull(volumeId, "volumeId");
        Objects.requireNonNull(targetPath, "targetPath");
        Objects.requireNonNull(pod, "pod");
        attributes = Map.copyOf(attributes);
        files = List.copyOf(files);
        readFiles = Set.copyOf(readFiles);
    }

    /**
     * Reads a volume's files from what the kubelet sent and what its publish resolved.
     *
     * @throws InvalidProjectionException naming the attribute, when the attributes do not read
     * @throws IllegalArgumentException when the owners give a file an id out of range
     */
    public static PublishedVolume of(String volumeId, Path targetPath, Map<String, String> attributes,
            PodOwners owners, String reloadContainer, Set<String> readFiles) throws InvalidProjectionException {
        VolumeAttributes.Request request = VolumeAttributes.parse(attributes);
        List<Projection> files = PodProjections.projections(request.pod(), owners, request.files());
        ReloadRequest reload = request.reload() == null || reloadContainer == null ? null
                : new ReloadRequest(request.reload().signal(), reloadContainer);
        return new PublishedVolume(volumeId, targetPath, attributes, owners, reloadContainer, readFiles,
                request.pod(), files, reload);
    }

    /** This volume, with {@code path} among the files seen read. */
    public PublishedVolume withRead(String path) {
        Set<String> read = new HashSet<>(readFiles);
        read.add(path);
        return new PublishedVolume(volumeId, targetPath, attributes, owners, reloadContainer, read, pod, files,
                reload);
    }

    /** The files as the scheduler keeps them, carrying their pod. */
    public TokenDirectory directory() {
        return new TokenDirectory(DIR_PREFIX + volumeId, targetPath, files, new TokenDirectory.Owner(volumeId, pod));
    }
}
