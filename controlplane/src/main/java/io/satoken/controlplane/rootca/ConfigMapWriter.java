package io.satoken.controlplane.rootca;

import io.kubernetes.client.openapi.ApiException;
import io.kubernetes.client.openapi.models.V1ConfigMap;

/** The API calls the root-CA publisher makes; the seam its tests record through. */
interface ConfigMapWriter {

    void create(V1ConfigMap configMap) throws ApiException;

    void update(V1ConfigMap configMap) throws ApiException;
}
