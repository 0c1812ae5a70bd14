package io.satoken.common.testing;

import com.google.gson.JsonArray;
import com.google.gson.JsonElement;
import com.google.gson.JsonObject;
import com.google.gson.JsonPrimitive;
import com.google.gson.annotations.SerializedName;
import io.kubernetes.client.custom.IntOrString;
import io.kubernetes.client.custom.Quantity;
import io.kubernetes.client.openapi.models.V1ObjectMeta;
import java.lang.reflect.Field;
import java.lang.reflect.Modifier;
import java.lang.reflect.ParameterizedType;
import java.lang.reflect.Type;
import java.nio.charset.StandardCharsets;
import java.time.OffsetDateTime;
import java.util.Base64;
import java.util.Collection;
import java.util.Map;

/**
 * The JSON of a client-java model with every field it declares set, at every level, as an API server would
 * send it; optionally with fields the model does not declare added to every object, as a newer server sends
 * them. Built from the model's own fields, so a new client-java version is covered without a fixture to edit.
 */
public final class ModelSamples {

    /** The name of the field no model declares, added to every object of a sample with unknown fields. */
    public static final String UNKNOWN_FIELD = "fieldFromANewerServer";
    /** Recursive models (JSON schema props) stop here; every kind satoken reads is shallower. */
    private static final int MAX_DEPTH = 16;
    /** A timestamp in the form the API server writes (MicroTime carries microseconds). */
    private static final String TIME = "2026-11-28T16:33:45.123456Z";

    private ModelSamples() {
    }

    /** Every declared field of {@code model}, set; with {@code unknownFields}, an unknown one in every object. */
    public static JsonObject of(Class<?> model, boolean unknownFields) {
        return sample(model, unknownFields, 0).getAsJsonObject();
    }

    /** A value of the shape a newer server might add: an object holding a list of objects and a number. */
    public static JsonElement unknownValue() {
        JsonObject deeper = new JsonObject();
        deeper.addProperty("deeper", "x");
        JsonArray list = new JsonArray();
        list.add(deeper);
        JsonObject value = new JsonObject();
        value.add("nested", list);
        value.addProperty("count", 3);
        return value;
    }

    private static JsonElement sample(Type type, boolean unknownFields, int depth) {
        Class<?> raw = raw(type);
        if (raw == String.class) {
            return new JsonPrimitive("s");
        } else if (raw == Integer.class || raw == Long.class) {
            return new JsonPrimitive(7);
        } else if (raw == Double.class || raw == Float.class) {
            return new JsonPrimitive(0.5);
        } else if (raw == Boolean.class) {
            return new JsonPrimitive(true);
        } else if (raw == OffsetDateTime.class) {
            return new JsonPrimitive(TIME);
        } else if (raw == byte[].class) {
            return new JsonPrimitive(Base64.getEncoder().encodeToString("bytes".getBytes(StandardCharsets.UTF_8)));
        } else if (raw == Quantity.class) {
            return new JsonPrimitive("100m");
        } else if (raw == IntOrString.class) {
            return new JsonPrimitive(8080);
        } else if (Map.class.isAssignableFrom(raw)) {
            JsonObject map = new JsonObject();
            map.add("k", sample(argument(type, 1), unknownFields, depth + 1));
            return map;
        } else if (Collection.class.isAssignableFrom(raw)) {
            JsonArray list = new JsonArray();
            list.add(sample(argument(type, 0), unknownFields, depth + 1));
            return list;
        } else if (raw == Object.class) {
            JsonObject any = new JsonObject();
            any.addProperty("any", "thing");
            return any;
        }
        return model(raw, unknownFields, depth);
    }

    private static JsonObject model(Class<?> raw, boolean unknownFields, int depth) {
        if (!raw.getPackageName().startsWith("io.kubernetes.client")) {
            throw new IllegalArgumentException("no sample for " + raw.getName());
        }
        JsonObject object = new JsonObject();
        for (Field field : raw.getDeclaredFields()) {
            SerializedName name = field.getAnnotation(SerializedName.class);
            if (name == null || Modifier.isStatic(field.getModifiers()) || depth >= MAX_DEPTH
                    || skipped(raw, field)) {
                continue;
            }
            object.add(name.value(), sample(field.getGenericType(), unknownFields, depth + 1));
        }
        if (unknownFields) {
            object.add(UNKNOWN_FIELD, unknownValue());
        }
        return object;
    }

    /** client-java never reads nor writes {@code managedFields} (its exclusion strategy): nothing to compare. */
    private static boolean skipped(Class<?> model, Field field) {
        return model == V1ObjectMeta.class && field.getName().equals("managedFields");
    }

    private static Class<?> raw(Type type) {
        if (type instanceof Class<?> c) {
            return c;
        }
        if (type instanceof ParameterizedType p) {
            return (Class<?>) p.getRawType();
        }
        throw new IllegalArgumentException("no sample for " + type);
    }

    private static Type argument(Type type, int index) {
        if (type instanceof ParameterizedType p) {
            return p.getActualTypeArguments()[index];
        }
        throw new IllegalArgumentException("not a parameterized collection: " + type);
    }
}
