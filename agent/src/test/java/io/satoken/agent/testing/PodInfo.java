package io.satoken.agent.testing;

import io.satoken.agent.projection.PodIdentity;
import java.util.HashMap;
import java.util.Map;

/** The volume context the kubelet sends for a pod's inline CSI volume (CSIDriver podInfoOnMount: true). */
public final class PodInfo {

    private PodInfo() {
    }

    /** The kubelet's pod info for {@code pod}, then the pod's own {@code volumeAttributes} as key, value pairs. */
    public static Map<String, String> attributes(PodIdentity pod, String... keyValues) {
        Map<String, String> attributes = new HashMap<>(Map.of(
                "csi.storage.k8s.io/pod.name", pod.name(),
                "csi.storage.k8s.io/pod.namespace", pod.namespace(),
                "csi.storage.k8s.io/pod.uid", pod.uid(),
                "csi.storage.k8s.io/serviceAccount.name", pod.serviceAccount(),
                "csi.storage.k8s.io/ephemeral", "true"));
        for (int i = 0; i < keyValues.length; i += 2) {
            attributes.put(keyValues[i], keyValues[i + 1]);
        }
        return attributes;
    }
}
