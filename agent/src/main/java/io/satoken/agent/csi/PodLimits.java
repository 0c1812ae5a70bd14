package io.satoken.agent.csi;

import io.grpc.Status;
import io.kubernetes.client.openapi.models.V1Pod;
import io.kubernetes.client.openapi.models.V1Volume;
import io.satoken.agent.projection.PodIdentity;
import io.satoken.common.projection.CsiVolumeAttributes;
import io.satoken.common.projection.InvalidProjectionException;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * What one pod may ask of its node's agent. Every TokenRequest of the node shares one client-side budget
 * ({@code --qps}, {@code --burst}) and every read watch one inotify limit, so a single pod declaring hundreds of
 * volumes of many files each would starve the node's other pods. The spec caps are checked on the pod the API
 * server has, so every volume of an over-limit pod is refused with the same message and none is half set up;
 * the in-flight cap spreads one pod's first TokenRequests over the kubelet's retries.
 */
final class PodLimits {

    /** {@value CsiVolumeAttributes#DRIVER} volumes in one pod's spec. */
    static final int MAX_VOLUMES = 8;
    /** Token files over all of one pod's volumes: as many as one volume may ask for. */
    static final int MAX_FILES = 64;
    /**
     * Token files of one pod waiting for their first token at once. A volume with more than this many files is
     * published alone, once the pod's other volumes have their tokens.
     */
    static final int MAX_PENDING_FILES = 16;

    private PodLimits() {
    }

    /** Publish step 4: the pod's spec asks for at most {@link #MAX_VOLUMES} volumes and {@link #MAX_FILES} files. */
    static void checkSpec(V1Pod pod, PodIdentity identity) throws CsiException {
        List<V1Volume> volumes = pod.getSpec() == null ? List.of()
                : Objects.requireNonNullElse(pod.getSpec().getVolumes(), List.of());
        int count = 0;
        int files = 0;
        for (V1Volume volume : volumes) {
            if (volume.getCsi() == null || !CsiVolumeAttributes.DRIVER.equals(volume.getCsi().getDriver())) {
                continue;
            }
            count++;
            try {
                files += CsiVolumeAttributes.files(Objects.requireNonNullElse(volume.getCsi().getVolumeAttributes(),
                        Map.of())).size();
            } catch (InvalidProjectionException e) {
                // that volume's own publish is refused with its errors; it asks for nothing here
            }
        }
        String name = identity.namespace() + "/" + identity.name();
        if (count > MAX_VOLUMES) {
            throw new CsiException(Status.Code.RESOURCE_EXHAUSTED, "spec.volumes: pod " + name + " has " + count + " "
                    + CsiVolumeAttributes.DRIVER + " volumes; a pod may have at most " + MAX_VOLUMES
                    + " (give one volume several files with volumeAttributes.projections)");
        }
        if (files > MAX_FILES) {
            throw new CsiException(Status.Code.RESOURCE_EXHAUSTED, "spec.volumes: pod " + name + " asks for " + files
                    + " token files in its " + CsiVolumeAttributes.DRIVER + " volumes; a pod may ask for at most "
                    + MAX_FILES);
        }
    }

    /**
     * Publish step 3: a volume of {@code adding} files may start while the pod has {@code pending} files waiting
     * for their first token only if together they stay within {@link #MAX_PENDING_FILES}; a volume is never
     * refused while the pod has none waiting.
     */
    static void checkPending(PodIdentity pod, int pending, int adding) throws CsiException {
        if (pending > 0 && pending + adding > MAX_PENDING_FILES) {
            throw new CsiException(Status.Code.RESOURCE_EXHAUSTED, "pod " + pod.namespace() + "/" + pod.name()
                    + " has " + pending + " token file(s) waiting for their first token; a pod may have at most "
                    + MAX_PENDING_FILES + " TokenRequests in flight, and this volume asks for " + adding
                    + "; the kubelet will retry");
        }
    }
}
