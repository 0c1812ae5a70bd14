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

    /**
     * Publish step 2: the target is where the kubelet mounts the kubelet's pod's inline volume,
     * {@code <kubeletDir>/pods/<pod uid>/volumes/kubernetes.io~csi/<volume>/mount}, with the uid of the pod info:
     * a target under another pod's directory would put this pod's tokens in that pod's volume.
     *
     * @return the volume's name in the pod's spec
     */
    static String volumeName(Path podsDir, Path target, String podUid) throws CsiException {
        Path relative = podsDir.relativize(target);
        if (relative.getNameCount() != 5 || !relative.getName(0).toString().equals(podUid)
                || !relative.getName(1).toString().equals("volumes")
                || !relative.getName(2).toString().equals("kubernetes.io~csi")
                || !relative.getName(4).toString().equals("mount")) {
            throw new CsiException(Status.Code.INVALID_ARGUMENT, "target_path: must be " + podsDir.resolve(podUid)
                    + "/volumes/kubernetes.io~csi/<volume>/mount, the kubelet's path for an inline volume of the pod "
                    + "csi.storage.k8s.io/pod.uid names, got " + target);
        }
        return relative.getName(3).toString();
    }
}
