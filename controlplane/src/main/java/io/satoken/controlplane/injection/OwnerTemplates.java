package io.satoken.controlplane.injection;

import io.kubernetes.client.openapi.ApiException;
import java.util.Map;

/** Reads a pod's controller, for the annotations of the pod template it creates its pods from. */
@FunctionalInterface
interface OwnerTemplates {

    /** The controller's uid and its {@code spec.template.metadata.annotations} (empty when it has none). */
    record Template(String uid, Map<String, String> annotations) {
        public Template {
            annotations = annotations == null ? Map.of() : Map.copyOf(annotations);
        }
    }

    /**
     * @throws ApiException as the API server answered, e.g. 404 when the controller is gone, 403 when the check may
     *         not read it
     */
    Template read(RecreatingOwner kind, String namespace, String name) throws ApiException;
}
