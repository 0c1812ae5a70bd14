package io.satoken.controlplane.admission;

import com.google.gson.Gson;
import com.google.gson.GsonBuilder;
import com.google.gson.JsonArray;
import com.google.gson.JsonElement;
import com.google.gson.JsonObject;
import com.google.gson.stream.JsonWriter;
import java.io.IOException;
import java.io.StringWriter;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.List;

/**
 * A pod being admitted, as JSON, and the RFC 6902 operations that turn the original into it.
 *
 * <p>Every change goes through this class, which applies it to the pod it was given and records the
 * operation that does the same to the API server's copy. Only {@code add} operations are made: a field the
 * webhook does not know is never touched, and appending with {@code /-} cannot clobber an item another
 * webhook added meanwhile.
 *
 * <p>Nothing is copied: each operation is written out as JSON when it is made, so a later change to the pod
 * (an append to a list this class created, say) cannot alter an operation already recorded.
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

    /** Writes values as they are: {@code <}, {@code >} and {@code &} need no escaping in a JSONPatch. */
    private static final Gson GSON = new GsonBuilder().disableHtmlEscaping().create();

    private final JsonObject pod;
    private final JsonObject spec;
    private final StringWriter text = new StringWriter(1024);
    private final JsonWriter operations = new JsonWriter(text);
    private int count;

    /** @param pod the request's object, which this class changes: the caller gives it up */
    PodPatch(JsonObject pod) throws InvalidReviewException {
        this.pod = pod;
        try {
            operations.beginArray(); // closed in operations(); the writer puts the commas in between
        } catch (IOException e) {
            throw new UncheckedIOException(e); // a StringWriter does not fail
        }
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

    /** Whether any operation has been made. */
    boolean changed() {
        return count > 0;
    }

    /** The operations so far, in order, as a JSON array ({@code []} when nothing changed). */
    String operations() {
        StringBuffer json = text.getBuffer();
        return new StringBuilder(json.length() + 1).append(json).append(']').toString();
    }

    private void append(JsonObject parent, String pointer, String field, JsonElement item) {
        JsonElement list = parent.get(field);
        if (list != null && list.isJsonArray()) {
            list.getAsJsonArray().add(item);
            add(pointer + "/" + field + "/-", item);
        } else {
            JsonArray fresh = new JsonArray();
            fresh.add(item);
            parent.add(field, fresh);
            add(pointer + "/" + field, fresh);
        }
    }

    /** Writes the operation now, with the value as it is now. */
    private void add(String path, JsonElement value) {
        try {
            count++;
            operations.beginObject().name("op").value("add").name("path").value(path).name("value");
            GSON.toJson(value, operations);
            operations.endObject();
        } catch (IOException e) {
            throw new UncheckedIOException(e); // a StringWriter does not fail
        }
    }
}
