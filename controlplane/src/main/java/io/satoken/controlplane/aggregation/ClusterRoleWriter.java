package io.satoken.controlplane.aggregation;

import io.kubernetes.client.openapi.ApiException;
import io.kubernetes.client.openapi.models.V1ClusterRole;

/** The API calls the aggregation controller makes; the seam its tests record through. */
interface ClusterRoleWriter {

    /** Field manager of every apply (CR-6). */
    String FIELD_MANAGER = "clusterrole-aggregation-controller";

    /** Server-side apply of {@code body} to ClusterRole {@code name}, as {@link #FIELD_MANAGER}, forced. */
    void apply(String name, String body) throws ApiException;

    /**
     * CR-6's update after a 415: writes {@code role}'s rules (null: none), and nothing else, guarded by its
     * resourceVersion; the role's other fields stay as they are on the server (CR-7).
     */
    void update(V1ClusterRole role) throws ApiException;
}
