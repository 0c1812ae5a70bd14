package io.satoken.controlplane.admission;

import com.google.gson.JsonArray;
import com.google.gson.JsonObject;

/** The volumes and mounts the webhook adds, as the JSON the API server will store. */
final class TokenVolumes {

    /** AD-6: 0644, set explicitly on the projected volume. */
    static final int PROJECTED_DEFAULT_MODE = 0644;

    private TokenVolumes() {
    }

    /**
     * AD-6: {@code kube-api-access-*}, a projected volume of, in order, a token (no audience), the
     * cluster's CA from {@code kube-root-ca.crt}, and the pod's namespace.
     */
    static JsonObject projected(String name, long expirationSeconds) {
        JsonObject token = new JsonObject();
        token.addProperty("expirationSeconds", expirationSeconds);
        token.addProperty("path", "token");

        JsonObject caItem = new JsonObject();
        caItem.addProperty("key", "ca.crt");
        caItem.addProperty("path", "ca.crt");
        JsonObject configMap = new JsonObject();
        configMap.addProperty("name", "kube-root-ca.crt");
        configMap.add("items", list(caItem));

        JsonObject fieldRef = new JsonObject();
        fieldRef.addProperty("apiVersion", "v1");
        fieldRef.addProperty("fieldPath", "metadata.namespace");
        JsonObject namespaceItem = new JsonObject();
        namespaceItem.addProperty("path", "namespace");
        namespaceItem.add("fieldRef", fieldRef);
        JsonObject downwardApi = new JsonObject();
        downwardApi.add("items", list(namespaceItem));

        JsonArray sources = new JsonArray();
        sources.add(wrap("serviceAccountToken", token));
        sources.add(wrap("configMap", configMap));
        sources.add(wrap("downwardAPI", downwardApi));
        JsonObject projected = new JsonObject();
        projected.add("sources", sources);
        projected.addProperty("defaultMode", PROJECTED_DEFAULT_MODE);

        JsonObject volume = new JsonObject();
        volume.addProperty("name", name);
        volume.add("projected", projected);
        return volume;
    }

    /** A read-only mount of {@code volume} at {@code path}. */
    static JsonObject mount(String volume, String path) {
        JsonObject mount = new JsonObject();
        mount.addProperty("name", volume);
        mount.addProperty("readOnly", true);
        mount.addProperty("mountPath", path);
        return mount;
    }

    /**
     * A CSI inline (ephemeral) volume, read-only, with one volume attribute: what the kubelet hands the
     * driver's node plugin when it publishes the volume for the pod.
     */
    static JsonObject csi(String name, String driver, String attribute, String value) {
        return csi(name, driver, java.util.Map.of(attribute, value));
    }

    /** A read-only csi volume of {@code driver} with {@code attributes}, in their keys' order. */
    static JsonObject csi(String name, String driver, java.util.Map<String, String> attributeValues) {
        JsonObject attributes = new JsonObject();
        new java.util.TreeMap<>(attributeValues).forEach(attributes::addProperty);
        JsonObject csi = new JsonObject();
        csi.addProperty("driver", driver);
        csi.addProperty("readOnly", true);
        csi.add("volumeAttributes", attributes);
        JsonObject volume = new JsonObject();
        volume.addProperty("name", name);
        volume.add("csi", csi);
        return volume;
    }

    private static JsonObject wrap(String field, JsonObject value) {
        JsonObject wrapper = new JsonObject();
        wrapper.add(field, value);
        return wrapper;
    }

    private static JsonArray list(JsonObject item) {
        JsonArray array = new JsonArray();
        array.add(item);
        return array;
    }
}
