package io.satoken.controlplane.aggregation;

import com.google.gson.JsonNull;
import io.kubernetes.client.custom.V1Patch;
import io.kubernetes.client.openapi.ApiClient;
import io.kubernetes.client.openapi.ApiException;
import io.kubernetes.client.openapi.JSON;
import io.kubernetes.client.openapi.apis.RbacAuthorizationV1Api;
import io.kubernetes.client.openapi.models.V1ClusterRole;
import io.kubernetes.client.util.PatchUtils;
import io.satoken.controlplane.kube.OwnedPatch;

/** {@link ClusterRoleWriter} through the API server. */
final class ApiClusterRoleWriter implements ClusterRoleWriter {

    private final ApiClient client;
    private final RbacAuthorizationV1Api rbac;

    ApiClusterRoleWriter(ApiClient client) {
        this.client = client;
        this.rbac = new RbacAuthorizationV1Api(client);
    }

    @Override
    public void apply(String name, String body) throws ApiException {
        PatchUtils.patch(V1ClusterRole.class,
                () -> rbac.patchClusterRole(name, new V1Patch(body)).fieldManager(FIELD_MANAGER).force(true)
                        .buildCall(null),
                V1Patch.PATCH_FORMAT_APPLY_YAML, client);
    }

    /** A merge patch of {@code rules}: never a PUT, which would drop the fields this client's models lack. */
    @Override
    public void update(V1ClusterRole role) throws ApiException {
        rulesPatch(role).send(client, V1ClusterRole.class,
                patch -> rbac.patchClusterRole(role.getMetadata().getName(), patch).buildCall(null));
    }

    /** The patch: the rules (JSON null when there are none) and the resourceVersion guard; nothing else. */
    static OwnedPatch rulesPatch(V1ClusterRole role) {
        return OwnedPatch.merge(role.getMetadata().getResourceVersion()).set("rules",
                role.getRules() == null ? JsonNull.INSTANCE : JSON.getGson().toJsonTree(role.getRules()));
    }
}
