package io.satoken.controlplane.admission;

import com.google.gson.JsonObject;
import java.util.List;
import java.util.Map;

/**
 * The parts of an {@code admission.k8s.io/v1} AdmissionRequest the webhook reads.
 *
 * @param resource the group/version/resource, e.g. {@code /v1/pods} for core pods
 * @param subResource "" when the request is for the object itself
 * @param operation CREATE, UPDATE, DELETE or CONNECT
 * @param object the new object, or null (DELETE, CONNECT)
 */
public record AdmissionRequest(String uid, GroupVersionResource resource, String subResource, String operation,
        String namespace, String name, UserInfo userInfo, JsonObject object, boolean dryRun) {

    /** {@code request.resource}. */
    public record GroupVersionResource(String group, String version, String resource) {
        public boolean isCore(String resourceName) {
            return group.isEmpty() && resource.equals(resourceName);
        }
    }

    /** {@code request.userInfo}: who asked; {@code extra} holds e.g. the pod a ServiceAccount token is bound to. */
    public record UserInfo(String username, String uid, List<String> groups, Map<String, List<String>> extra) {
        public UserInfo {
            groups = List.copyOf(groups);
            extra = Map.copyOf(extra);
        }

        /** The single value of {@code extra[key]}, or null when it has none or several. */
        public String extraValue(String key) {
            List<String> values = extra.get(key);
            return values != null && values.size() == 1 ? values.get(0) : null;
        }
    }

    public boolean isCreate() {
        return "CREATE".equals(operation);
    }

    /** "namespace/name" as the upstream messages print it. */
    public String namespacedName() {
        return namespace + "/" + name;
    }
}
