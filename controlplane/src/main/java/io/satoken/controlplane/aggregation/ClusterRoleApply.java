package io.satoken.controlplane.aggregation;

import com.google.gson.JsonArray;
import com.google.gson.JsonObject;
import java.util.List;

/**
 * The body of the server-side apply (CR-6): apiVersion, kind, the name and the rules, nothing else, so the
 * controller owns only {@code rules}. A rule carries only its non-empty lists, and an empty rule list is
 * left out altogether, as upstream's apply configuration does: the controller then gives up the field, and
 * the API server removes it when nobody else owns it.
 */
final class ClusterRoleApply {

    static final String API_VERSION = "rbac.authorization.k8s.io/v1";

    private ClusterRoleApply() {
    }

    static String json(String name, List<Rule> rules) {
        JsonObject metadata = new JsonObject();
        metadata.addProperty("name", name);
        JsonObject body = new JsonObject();
        body.addProperty("apiVersion", API_VERSION);
        body.addProperty("kind", "ClusterRole");
        body.add("metadata", metadata);
        if (!rules.isEmpty()) {
            JsonArray array = new JsonArray();
            for (Rule rule : rules) {
                JsonObject r = new JsonObject();
                put(r, "apiGroups", rule.apiGroups());
                put(r, "resources", rule.resources());
                put(r, "resourceNames", rule.resourceNames());
                put(r, "nonResourceURLs", rule.nonResourceURLs());
                put(r, "verbs", rule.verbs());
                array.add(r);
            }
            body.add("rules", array);
        }
        return body.toString();
    }

    private static void put(JsonObject rule, String field, List<String> values) {
        if (!values.isEmpty()) {
            JsonArray array = new JsonArray();
            values.forEach(array::add);
            rule.add(field, array);
        }
    }
}
