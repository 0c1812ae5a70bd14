package io.satoken.controlplane.rootca;

import io.kubernetes.client.openapi.ApiException;
import io.kubernetes.client.openapi.models.V1ConfigMap;
import java.util.Map;

/** The API calls the root-CA publisher makes; the seam its tests record through. */
interface ConfigMapWriter {

    void create(V1ConfigMap configMap) throws ApiException;

    /**
     * Makes {@code current}'s data exactly {@code data} and sets its description annotation (RC-3), guarded by
     * {@code current}'s resourceVersion; every other field stays as it is on the server.
     */
    void update(V1ConfigMap current, Map<String, String> data, String description) throws ApiException;
}
