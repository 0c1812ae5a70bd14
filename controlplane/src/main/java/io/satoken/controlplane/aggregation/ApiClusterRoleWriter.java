package io.satoken.controlplane.aggregation;

import io.kubernetes.client.custom.V1Patch;
import io.kubernetes.client.openapi.ApiClient;
import io.kubernetes.client.openapi.ApiException;
import io.kubernetes.client.openapi.apis.RbacAuthorizationV1Api;
import io.kubernetes.client.openapi.models.V1ClusterRole;
import io.kubernetes.client.util.PatchUtils;

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

    @Override
    public void update(V1ClusterRole role) throws ApiException {
        rbac.replaceClusterRole(role.getMetadata().getName(), role).execute();
    }
}
