package io.satoken.agent.csi;

import io.kubernetes.client.openapi.ApiClient;
import io.kubernetes.client.openapi.ApiException;
import io.kubernetes.client.openapi.apis.CoreV1Api;
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

    /** Reads a pod with the agent's client: one GET per publish, for its securityContext and uid. */
    static PodReader api(ApiClient client) {
        CoreV1Api api = new CoreV1Api(client);
        return (namespace, name) -> {
            try {
                return api.readNamespacedPod(name, namespace).execute();
            } catch (ApiException e) {
                if (e.getCode() == 404) {
                    return null;
                }
                throw new IOException(e.getCode() == 0 ? String.valueOf(e.getCause()) : "HTTP " + e.getCode(), e);
            }
        };
    }
}
