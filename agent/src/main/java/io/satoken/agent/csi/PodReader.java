package io.satoken.agent.csi;

import io.kubernetes.client.openapi.models.V1Pod;
import java.io.IOException;

/** Reads one pod from the API server: the pod's securityContext decides its files' modes and owners. */
@FunctionalInterface
public interface PodReader {

    /**
     * @return the pod, or null when the API server has no such pod
     * @throws IOException when the API server could not be asked or refused
     */
    V1Pod read(String namespace, String name) throws IOException;
}
