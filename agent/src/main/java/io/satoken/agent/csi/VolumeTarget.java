package io.satoken.agent.csi;

import io.grpc.Status;
import java.nio.file.Path;

/** Checks a publish or unpublish request's volume id and target path before anything is done with them. */
final class VolumeTarget {

    private VolumeTarget() {
    }

    /** Step 1: the id names a file, and the target is a normalized absolute path under the kubelet's pods. */
    static Path check(Path podsDir, String volumeId, String targetPath) throws CsiException {
        if (volumeId == null || volumeId.isEmpty()) {
            throw new CsiException(Status.Code.INVALID_ARGUMENT, "volume_id: Required value");
        }
        if (!VolumeStore.validId(volumeId)) {
            throw new CsiException(Status.Code.INVALID_ARGUMENT,
                    "volume_id: must be 1-128 letters, digits, '.', '_' or '-', starting with a letter or digit");
        }
        if (targetPath == null || targetPath.isEmpty()) {
            throw new CsiException(Status.Code.INVALID_ARGUMENT, "target_path: Required value");
        }
        Path target = Path.of(targetPath);
        if (!target.isAbsolute() || !target.normalize().equals(target) || !target.startsWith(podsDir)
                || target.equals(podsDir)) {
            throw new CsiException(Status.Code.INVALID_ARGUMENT, "target_path: must be a normalized absolute path "
                    + "under " + podsDir + ", got " + targetPath);
        }
        return target;
    }
}
