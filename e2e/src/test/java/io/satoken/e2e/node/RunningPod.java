package io.satoken.e2e.node;

import io.kubernetes.client.openapi.models.V1Pod;
import java.time.Duration;

/**
 * A pod the node runs, as read when it was first seen Running, and how long that took from the create call's
 * answer (measured by polling every 50 ms, so within 50 ms).
 */
public record RunningPod(V1Pod pod, Duration createdToRunning) {

    public String namespace() {
        return pod.getMetadata().getNamespace();
    }

    public String name() {
        return pod.getMetadata().getName();
    }

    public String uid() {
        return pod.getMetadata().getUid();
    }
}
