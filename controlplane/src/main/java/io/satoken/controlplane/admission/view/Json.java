package io.satoken.controlplane.admission.view;

import com.google.gson.JsonArray;
import com.google.gson.JsonElement;
import com.google.gson.JsonObject;
import com.google.gson.JsonPrimitive;
import java.util.ArrayList;
import java.util.List;

/**
 * Typed reads from a JSON tree whose shape is untrusted, by member name: only {@link Field} reads by name, so that
 * every member read is a declared one. The webhook reads pods as JSON rather than as
 * client-java models: those models refuse any field they do not know, so a pod from an API server newer
 * than the client would be unreadable. A missing or {@code null} field reads as absent; a field of the
 * wrong type is an {@link InvalidReviewException} naming its path.
 */
public final class Json {

    private Json() {
    }

    /** The object at {@code field}, or null when absent. */
    static JsonObject object(JsonObject parent, String field, String path) throws InvalidReviewException {
        JsonElement value = present(parent, field);
        if (value == null) {
            return null;
        }
        if (!value.isJsonObject()) {
            throw wrongType(path, field, "an object", value);
        }
        return value.getAsJsonObject();
    }

    /** The objects of the list at {@code field}; empty when absent. */
    static List<JsonObject> objects(JsonObject parent, String field, String path) throws InvalidReviewException {
        JsonElement value = present(parent, field);
        if (value == null) {
            return List.of();
        }
        if (!value.isJsonArray()) {
            throw wrongType(path, field, "a list", value);
        }
        JsonArray array = value.getAsJsonArray();
        List<JsonObject> items = new ArrayList<>(array.size());
        for (int i = 0; i < array.size(); i++) {
            JsonElement item = array.get(i);
            if (!item.isJsonObject()) {
                throw wrongType(path, field + "[" + i + "]", "an object", item);
            }
            items.add(item.getAsJsonObject());
        }
        return items;
    }

    /** The string at {@code field}, or null when absent. */
    static String string(JsonObject parent, String field, String path) throws InvalidReviewException {
        JsonElement value = present(parent, field);
        if (value == null) {
            return null;
        }
        if (!value.isJsonPrimitive() || !value.getAsJsonPrimitive().isString()) {
            throw wrongType(path, field, "a string", value);
        }
        return value.getAsString();
    }

    /** The string at {@code field}, or "" when absent: Go's zero value, which the upstream rules test for. */
    static String stringOrEmpty(JsonObject parent, String field, String path) throws InvalidReviewException {
        String value = string(parent, field, path);
        return value == null ? "" : value;
    }

    /** The boolean at {@code field}, or null when absent. */
    static Boolean bool(JsonObject parent, String field, String path) throws InvalidReviewException {
        JsonElement value = present(parent, field);
        if (value == null) {
            return null;
        }
        if (!value.isJsonPrimitive() || !value.getAsJsonPrimitive().isBoolean()) {
            throw wrongType(path, field, "a boolean", value);
        }
        return value.getAsBoolean();
    }

    /** The strings of the list at {@code field}; empty when absent. */
    static List<String> strings(JsonObject parent, String field, String path) throws InvalidReviewException {
        JsonElement value = present(parent, field);
        if (value == null) {
            return List.of();
        }
        if (!value.isJsonArray()) {
            throw wrongType(path, field, "a list", value);
        }
        List<String> items = new ArrayList<>();
        for (JsonElement item : value.getAsJsonArray()) {
            if (!item.isJsonPrimitive() || !item.getAsJsonPrimitive().isString()) {
                throw wrongType(path, field + "[" + items.size() + "]", "a string", item);
            }
            items.add(item.getAsString());
        }
        return items;
    }

    public static JsonPrimitive text(String value) {
        return new JsonPrimitive(value);
    }

    private static JsonElement present(JsonObject parent, String field) {
        if (parent == null) {
            return null;
        }
        JsonElement value = parent.get(field);
        return value == null || value.isJsonNull() ? null : value;
    }

    private static InvalidReviewException wrongType(String path, String field, String expected, JsonElement got) {
        return new InvalidReviewException(path + "." + field + ": must be " + expected + ", got " + describe(got));
    }

    private static String describe(JsonElement value) {
        if (value.isJsonObject()) {
            return "an object";
        }
        if (value.isJsonArray()) {
            return "a list";
        }
        JsonPrimitive primitive = value.getAsJsonPrimitive();
        return primitive.isString() ? "a string" : primitive.isBoolean() ? "a boolean" : "a number";
    }
}
