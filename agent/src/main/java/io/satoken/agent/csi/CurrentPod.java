package io.satoken.agent.csi;

import io.grpc.Status;
import io.kubernetes.client.openapi.models.V1Pod;
import io.satoken.agent.projection.PodIdentity;
import java.io.IOException;

/** Reads a volume's pod and checks it is still the one the kubelet named: a pod recreated under its name has a new uid. */
final class CurrentPod {

    private CurrentPod() {
    }

    /** Publish step 4: the pod as the API server has it now, for its securityContext (PV-16..PV-18). */
    static V1Pod read(PodReader pods, PodIdentity pod) throws CsiException {
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
        if (!pod.uid().equals(uid)) {
            throw new CsiException(Status.Code.FAILED_PRECONDITION, "pod " + pod.namespace() + "/" + pod.name()
                    + " now has uid " + uid + ", not the kubelet's " + pod.uid() + "; it was replaced");
        }
        return current;
    }
}
