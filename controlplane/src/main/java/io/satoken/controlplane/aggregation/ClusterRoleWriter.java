package io.satoken.controlplane.aggregation;

import io.kubernetes.client.openapi.ApiException;
import io.kubernetes.client.openapi.models.V1ClusterRole;

/** The API calls the aggregation controller makes; the seam its tests record through. */
interface ClusterRoleWriter {

    /** Field manager of every apply (CR-6). */
    String FIELD_MANAGER = "clusterrole-aggregation-controller";

    /** Server-side apply of {@code body} to ClusterRole {@code name}, as {@link #FIELD_MANAGER}, forced. */
    void apply(String name, String body) throws ApiException;

    /** A full update (PUT) of {@code role}. */
    void update(V1ClusterRole role) throws ApiException;
}
