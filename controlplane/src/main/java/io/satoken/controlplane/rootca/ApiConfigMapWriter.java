package io.satoken.controlplane.rootca;

import io.kubernetes.client.openapi.ApiClient;
import io.kubernetes.client.openapi.ApiException;
import io.kubernetes.client.openapi.apis.CoreV1Api;
import io.kubernetes.client.openapi.models.V1ConfigMap;
import io.kubernetes.client.openapi.models.V1ObjectMeta;
import io.satoken.controlplane.kube.OwnedPatch;
import java.util.Map;
import java.util.Optional;

/** {@link ConfigMapWriter} through the API server: a create, or a merge patch of data and the description. */
final class ApiConfigMapWriter implements ConfigMapWriter {

    private final ApiClient client;
    private final CoreV1Api core;

    ApiConfigMapWriter(ApiClient client) {
        this.client = client;
        this.core = new CoreV1Api(client);
    }

    @Override
    public void create(V1ConfigMap cm) throws ApiException {
        core.createNamespacedConfigMap(cm.getMetadata().getNamespace(), cm).execute();
    }

    @Override
    public void update(V1ConfigMap current, Map<String, String> data, String description) throws ApiException {
        V1ObjectMeta meta = current.getMetadata();
        patch(current, data, description).send(client, V1ConfigMap.class,
                patch -> core.patchNamespacedConfigMap(meta.getName(), meta.getNamespace(), patch).buildCall(null));
    }

    /** The patch: {@code data} set, the current keys it lacks removed, the description set; nothing else. */
    static OwnedPatch patch(V1ConfigMap current, Map<String, String> data, String description) {
        return OwnedPatch.merge(current.getMetadata().getResourceVersion())
                .annotations(Map.of(RootCaSync.DESCRIPTION_ANNOTATION, description))
                .exactMap("data", data, Optional.ofNullable(current.getData()).orElse(Map.of()).keySet());
    }
}
