package io.satoken.controlplane.injection;

import io.kubernetes.client.common.KubernetesObject;
import io.kubernetes.client.openapi.models.V1CSIVolumeSource;
import io.kubernetes.client.openapi.models.V1ObjectMeta;
import io.kubernetes.client.openapi.models.V1Pod;
import io.kubernetes.client.openapi.models.V1PodSpec;
import io.kubernetes.client.openapi.models.V1PodStatus;
import io.kubernetes.client.openapi.models.V1Volume;
import io.satoken.common.projection.ProjectionAnnotation;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * The fields of a pod the check reads, and only those: the pod informer's transform, so that a cache of every pod in
 * the cluster holds a small copy of each (no containers, conditions or managedFields). Those fields are: the key,
 * uid and deletion timestamp; whether it has the two annotations {@link InjectionCheckSync#lacksVolume} looks for (not their values); the controller's
 * ownerReference; the volume {@value InjectionCheckSync#VOLUME_NAME} with its CSI driver; the phase.
 */
final class PodFields {

    private PodFields() {
    }

    /**
     * A copy of {@code object} with only those fields if it is a pod; anything else (a tombstone), or a pod already
     * kept (the paged list keeps each pod before the informer's transform sees it), as it is.
     */
    static KubernetesObject keep(KubernetesObject object) {
        if (!(object instanceof V1Pod pod) || pod.getMetadata() == null || kept(pod)) {
            return object;
        }
        V1ObjectMeta meta = pod.getMetadata();
        V1Pod kept = new V1Pod().apiVersion(pod.getApiVersion()).kind(pod.getKind()).metadata(new V1ObjectMeta()
                .namespace(meta.getNamespace()).name(meta.getName()).uid(meta.getUid())
                .resourceVersion(meta.getResourceVersion()).deletionTimestamp(meta.getDeletionTimestamp())
                .annotations(annotations(meta.getAnnotations()))
                .ownerReferences(ReplacementCheck.controller(pod).map(List::of).orElse(null)));
        if (pod.getSpec() != null) {
            kept.spec(new V1PodSpec().containers(null).overhead(null).volumes(tokenVolume(pod.getSpec().getVolumes())));
        }
        if (pod.getStatus() != null) {
            kept.status(new V1PodStatus().phase(pod.getStatus().getPhase()));
        }
        return kept;
    }

    /** A pod's spec always lists containers; only a kept copy has none. */
    private static boolean kept(V1Pod pod) {
        return pod.getSpec() != null && pod.getSpec().getContainers() == null;
    }

    private static Map<String, String> annotations(Map<String, String> all) {
        if (all == null) {
            return null;
        }
        Map<String, String> kept = new HashMap<>(2);
        for (String name : List.of(ProjectionAnnotation.NAME, InjectionCheckSync.MIRROR_POD_ANNOTATION)) {
            if (all.containsKey(name)) {
                kept.put(name, ""); // only their presence is read; a pod's annotation may be 256 KiB
            }
        }
        return kept.isEmpty() ? null : kept;
    }

    private static List<V1Volume> tokenVolume(List<V1Volume> volumes) {
        List<V1Volume> kept = Objects.requireNonNullElse(volumes, List.<V1Volume>of()).stream()
                .filter(v -> InjectionCheckSync.VOLUME_NAME.equals(v.getName()))
                .map(v -> new V1Volume().name(v.getName())
                        .csi(v.getCsi() == null ? null : new V1CSIVolumeSource().driver(v.getCsi().getDriver())))
                .toList();
        return kept.isEmpty() ? null : kept;
    }
}
