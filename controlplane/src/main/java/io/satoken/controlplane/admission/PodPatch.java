package io.satoken.controlplane.admission;

import com.google.gson.JsonArray;
import com.google.gson.JsonElement;
import com.google.gson.JsonObject;
import java.util.ArrayList;
import java.util.List;

/**
 * A pod being admitted, as JSON, and the RFC 6902 operations that turn the original into it.
 *
 * <p>Every change goes through this class, which applies it to its own copy and records the operation
 * that does the same to the API server's copy. Only {@code add} operations are made: a field the
 * webhook does not know is never touched, and appending with {@code /-} cannot clobber an item another
 * webhook added meanwhile.
 */
final class PodPatch {

    /** Where a container sits in the pod: its list and index. */
    record ContainerRef(String list, int index, JsonObject container) {
        String pointer() {
            return "/spec/" + list + "/" + index;
        }

        /** The field path for messages, e.g. {@code spec.initContainers[0]}. */
        String path() {
            return "spec." + list + "[" + index + "]";
        }

        String name() throws InvalidReviewException {
            return Json.stringOrEmpty(container, "name", path());
        }
    }

    private final JsonObject pod;
    private final JsonObject spec;
    private final JsonArray operations = new JsonArray();

    /** @param original the request's object; not modified */
    PodPatch(JsonObject original) throws InvalidReviewException {
        this.pod = original.deepCopy();
        JsonObject existing = Json.object(pod, "spec", "request.object");
        if (existing == null) {
            existing = new JsonObject();
            pod.add("spec", existing);
            add("/spec", new JsonObject());
        }
        this.spec = existing;
    }

    /** The pod with every change so far; callers must change it only through this class. */
    JsonObject pod() {
        return pod;
    }

    JsonObject spec() {
        return spec;
    }

    /** {@code metadata.annotations[key]}, or null. */
    String annotation(String key) throws InvalidReviewException {
        JsonObject metadata = Json.object(pod, "metadata", "request.object");
        JsonObject annotations = Json.object(metadata, "annotations", "metadata");
        return Json.string(annotations, key, "metadata.annotations");
    }

    boolean hasAnnotation(String key) throws InvalidReviewException {
        JsonObject metadata = Json.object(pod, "metadata", "request.object");
        JsonObject annotations = Json.object(metadata, "annotations", "metadata");
        return annotations != null && annotations.has(key);
    }

    /** Init containers then regular containers, the order upstream visits them in. */
    List<ContainerRef> initAndRegularContainers() throws InvalidReviewException {
        List<ContainerRef> refs = new ArrayList<>(containers("initContainers"));
        refs.addAll(containers("containers"));
        return refs;
    }

    List<ContainerRef> containers(String list) throws InvalidReviewException {
        List<JsonObject> items = Json.objects(spec, list, "spec");
        List<ContainerRef> refs = new ArrayList<>(items.size());
        for (int i = 0; i < items.size(); i++) {
            refs.add(new ContainerRef(list, i, items.get(i)));
        }
        return refs;
    }

    /** Sets {@code spec.<field>}, adding or replacing it. */
    void setSpec(String field, JsonElement value) {
        spec.add(field, value);
        add("/spec/" + field, value);
    }

    /** Appends {@code item} to the list {@code spec.<field>}, making the list if there is none. */
    void appendToSpec(String field, JsonElement item) {
        append(spec, "/spec", field, item);
    }

    /** Appends {@code item} to the list {@code <container>.<field>}, making the list if there is none. */
    void appendToContainer(ContainerRef ref, String field, JsonElement item) {
        append(ref.container(), ref.pointer(), field, item);
    }

    /** The operations so far, in order; empty when nothing changed. */
    JsonArray operations() {
        return operations.deepCopy();
    }

    private void append(JsonObject parent, String pointer, String field, JsonElement item) {
        JsonElement list = parent.get(field);
        if (list != null && list.isJsonArray()) {
            list.getAsJsonArray().add(item.deepCopy());
            add(pointer + "/" + field + "/-", item);
        } else {
            JsonArray fresh = new JsonArray();
            fresh.add(item.deepCopy());
            parent.add(field, fresh);
            add(pointer + "/" + field, fresh);
        }
    }

    private void add(String path, JsonElement value) {
        JsonObject op = new JsonObject();
        op.addProperty("op", "add");
        op.addProperty("path", path);
        op.add("value", value.deepCopy());
        operations.add(op);
    }
}
