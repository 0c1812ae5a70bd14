package io.satoken.agent.csi;

import io.grpc.Status;
import io.kubernetes.client.openapi.models.V1Pod;
import io.kubernetes.client.openapi.models.V1PodSpec;
import io.kubernetes.client.openapi.models.V1Volume;
import io.satoken.agent.projection.PodIdentity;
import io.satoken.common.projection.CsiVolumeAttributes;
import java.io.IOException;
import java.util.List;
import java.util.Objects;

/**
 * Reads a volume's pod and checks it is the one the kubelet named: a pod recreated under its name has a new uid,
 * and the pod must be on this node, run as the ServiceAccount the kubelet named and have the volume. The
 * kubelet's pod info is trusted no further than the API server confirms it.
 */
final class CurrentPod {

    private CurrentPod() {
    }

    /**
     * Publish step 4: the pod as the API server has it now, for its securityContext (PV-16..PV-18).
     *
     * @param node this agent's node
     * @param volumeName the volume's name in the pod's spec, from the target path
     */
    static V1Pod read(PodReader pods, PodIdentity pod, String node, String volumeName) throws CsiException {
        V1Pod current;
        try {
            current = pods.read(pod.namespace(), pod.name());
        } catch (IOException e) {
            throw new CsiException(Status.Code.UNAVAILABLE, "reading pod " + pod + " failed: " + e.getMessage(), e);
        }
        if (current == null) {
            throw new CsiException(Status.Code.NOT_FOUND, "pod " + pod + " does not exist");
        }
        String uid = current.getMetadata() == null ? null : current.getMetadata().getUid();
        String name = pod.namespace() + "/" + pod.name();
        if (!pod.uid().equals(uid)) {
            throw new CsiException(Status.Code.FAILED_PRECONDITION, "pod " + name
                    + " now has uid " + uid + ", not the kubelet's " + pod.uid() + "; it was replaced");
        }
        V1PodSpec spec = Objects.requireNonNullElseGet(current.getSpec(), V1PodSpec::new);
        if (!node.equals(spec.getNodeName())) {
            throw new CsiException(Status.Code.FAILED_PRECONDITION, "pod " + name + " is bound to node "
                    + spec.getNodeName() + " (spec.nodeName), not to this agent's node " + node);
        }
        String account = spec.getServiceAccountName() == null || spec.getServiceAccountName().isEmpty()
                ? "default" : spec.getServiceAccountName();
        if (!account.equals(pod.serviceAccount())) {
            throw new CsiException(Status.Code.FAILED_PRECONDITION, "pod " + name + " runs as ServiceAccount "
                    + account + " (spec.serviceAccountName), not as the kubelet's " + pod.serviceAccount()
                    + " (csi.storage.k8s.io/serviceAccount.name)");
        }
        boolean hasVolume = Objects.requireNonNullElse(spec.getVolumes(), List.<V1Volume>of()).stream()
                .anyMatch(v -> volumeName.equals(v.getName()) && v.getCsi() != null
                        && CsiVolumeAttributes.DRIVER.equals(v.getCsi().getDriver()));
        if (!hasVolume) {
            throw new CsiException(Status.Code.FAILED_PRECONDITION, "pod " + name + " has no " + CsiVolumeAttributes.DRIVER
                    + " volume named " + volumeName + " (spec.volumes), the volume target_path is for");
        }
        return current;
    }
}
