package io.satoken.controlplane.admission.view;

import com.google.gson.Gson;
import com.google.gson.GsonBuilder;
import com.google.gson.JsonArray;
import com.google.gson.JsonElement;
import com.google.gson.JsonObject;
import com.google.gson.stream.JsonWriter;
import java.io.IOException;
import java.io.StringWriter;
import java.io.UncheckedIOException;

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
public final class PodPatch {

    /** Writes values as they are: {@code <}, {@code >} and {@code &} need no escaping in a JSONPatch. */
    private static final Gson GSON = new GsonBuilder().disableHtmlEscaping().create();

    private final JsonObject spec;
    private final PodView view;
    private final StringWriter text = new StringWriter(1024);
    private final JsonWriter operations = new JsonWriter(text);
    private int count;

    /** @param pod the request's object, which this class changes: the caller gives it up */
    public PodPatch(JsonObject pod) throws InvalidReviewException {
        try {
            operations.beginArray(); // closed in operations(); the writer puts the commas in between
        } catch (IOException e) {
            throw new UncheckedIOException(e); // a StringWriter does not fail
        }
        JsonObject existing = PodView.SPEC.read(pod, "request.object");
        if (existing == null) {
            existing = new JsonObject();
            pod.add("spec", existing);
            add("/spec", new JsonObject());
        }
        this.spec = existing;
        this.view = new PodView(pod, existing);
    }

    /** The pod with every change so far, to read. */
    public PodView view() {
        return view;
    }

    /** Sets {@code spec.<field>}, adding or replacing it. */
    public void setSpec(String field, JsonElement value) {
        spec.add(field, value);
        add("/spec/" + field, value);
    }

    /**
     * Appends {@code item} to the list {@code spec.<list>}, making the list if there is none. The list is a declared
     * one, so the review reader kept it: an append never stands for a list the pod has.
     */
    public void appendToSpec(Field.Items list, JsonElement item) {
        append(spec, "/spec", list.name(), item);
    }

    /** Appends {@code item} to the list {@code <container>.<list>}, making the list if there is none. */
    public void appendToContainer(ContainerView container, Field.Items list, JsonElement item) {
        append(container.container(), container.pointer(), list.name(), item);
    }

    /** Whether any operation has been made. */
    public boolean changed() {
        return count > 0;
    }

    /** The operations so far, in order, as a JSON array ({@code []} when nothing changed). */
    public String operations() {
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
