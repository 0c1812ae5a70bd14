package io.satoken.controlplane.kube;

import com.google.gson.JsonElement;
import com.google.gson.JsonNull;
import com.google.gson.JsonObject;
import io.kubernetes.client.custom.V1Patch;
import io.kubernetes.client.openapi.ApiClient;
import io.kubernetes.client.openapi.ApiException;
import io.kubernetes.client.util.PatchUtils;
import java.util.Map;
import java.util.Set;

/**
 * A write of only the fields a controller owns, as a patch, never a whole object read into a model and PUT
 * back: a PUT would erase every field this client's models do not know, which a newer API server keeps.
 *
 * <p>Each patch carries the {@code metadata.resourceVersion} the controller decided on, so the API server answers
 * 409 Conflict when the object changed since, exactly as the update it replaces would (TC-4, TC-5, RC-3, CR-6).
 */
public final class OwnedPatch {

    /** How the body merges: RFC 7386 merge patch, or Kubernetes' strategic merge patch (list items by key). */
    public enum Kind {
        MERGE(V1Patch.PATCH_FORMAT_JSON_MERGE_PATCH),
        STRATEGIC(V1Patch.PATCH_FORMAT_STRATEGIC_MERGE_PATCH);

        final String contentType;

        Kind(String contentType) {
            this.contentType = contentType;
        }
    }

    /** The call that sends a patch body: one generated {@code patch*} method of client-java. */
    @FunctionalInterface
    public interface Call {
        okhttp3.Call build(V1Patch body) throws ApiException;
    }

    private final Kind kind;
    private final JsonObject body = new JsonObject();
    private final JsonObject metadata = new JsonObject();

    private OwnedPatch(Kind kind, String resourceVersion) {
        this.kind = kind;
        if (resourceVersion == null || resourceVersion.isEmpty()) {
            throw new IllegalArgumentException("metadata.resourceVersion: required to guard a controller's write");
        }
        metadata.addProperty("resourceVersion", resourceVersion);
        body.add("metadata", metadata);
    }

    /** A merge patch guarded by {@code resourceVersion}. */
    public static OwnedPatch merge(String resourceVersion) {
        return new OwnedPatch(Kind.MERGE, resourceVersion);
    }

    /** A strategic merge patch guarded by {@code resourceVersion}. */
    public static OwnedPatch strategic(String resourceVersion) {
        return new OwnedPatch(Kind.STRATEGIC, resourceVersion);
    }

    /** Sets these annotations; the object's other annotations stay. */
    public OwnedPatch annotations(Map<String, String> annotations) {
        JsonObject map = new JsonObject();
        annotations.forEach(map::addProperty);
        metadata.add("annotations", map);
        return this;
    }

    /** Sets top-level field {@code name} to {@code value}. */
    public OwnedPatch set(String name, JsonElement value) {
        body.add(name, value);
        return this;
    }

    /**
     * Makes map field {@code name} hold exactly {@code entries}: they are set, and each of {@code present} that
     * is not among them is removed (null, in a merge patch).
     */
    public OwnedPatch exactMap(String name, Map<String, String> entries, Set<String> present) {
        JsonObject map = new JsonObject();
        for (String key : present) {
            if (!entries.containsKey(key)) {
                map.add(key, JsonNull.INSTANCE);
            }
        }
        entries.forEach(map::addProperty);
        body.add(name, map);
        return this;
    }

    /** The patch body, as sent. */
    public String json() {
        return body.toString();
    }

    /** Sends the patch through {@code call} and reads the answer as {@code type}. */
    public <T> T send(ApiClient client, Class<T> type, Call call) throws ApiException {
        V1Patch patch = new V1Patch(json());
        return PatchUtils.patch(type, () -> call.build(patch), kind.contentType, client);
    }
}
