package io.satoken.controlplane.admission;

import com.google.gson.JsonElement;
import com.google.gson.JsonObject;
import com.google.gson.JsonParseException;
import com.google.gson.JsonParser;
import com.google.gson.Strictness;
import com.google.gson.stream.JsonReader;
import com.google.gson.stream.JsonToken;
import com.google.gson.stream.JsonWriter;
import java.io.IOException;
import java.io.StringReader;
import java.io.StringWriter;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Reads an {@code admission.k8s.io/v1} AdmissionReview request and writes its response.
 *
 * <p>The body is parsed strictly (RFC 8259, nothing after the document); every shape error names the
 * field, so a malformed review is answered with a denied review that says what was wrong.
 */
public final class AdmissionReviews {

    static final String API_VERSION = "admission.k8s.io/v1";
    static final String KIND = "AdmissionReview";

    private AdmissionReviews() {
    }

    /** Parses a review; {@code uidOut[0]} receives the request's uid as soon as it is known, for the error answer. */
    public static AdmissionRequest read(byte[] body, String[] uidOut) throws InvalidReviewException {
        JsonObject review = parse(body);
        JsonObject request = Json.object(review, "request", "AdmissionReview");
        if (request != null) {
            uidOut[0] = stringOrNull(request, "uid");
        }
        String apiVersion = Json.string(review, "apiVersion", "AdmissionReview");
        String kind = Json.string(review, "kind", "AdmissionReview");
        if (!API_VERSION.equals(apiVersion) || !KIND.equals(kind)) {
            throw new InvalidReviewException("AdmissionReview: expected apiVersion " + API_VERSION + " and kind " + KIND
                    + ", got apiVersion " + quote(apiVersion) + " and kind " + quote(kind));
        }
        if (request == null) {
            throw new InvalidReviewException("AdmissionReview.request: required");
        }
        String uid = required(request, "uid");
        JsonObject resource = Json.object(request, "resource", "request");
        if (resource == null) {
            throw new InvalidReviewException("request.resource: required");
        }
        AdmissionRequest.GroupVersionResource gvr = new AdmissionRequest.GroupVersionResource(
                Json.stringOrEmpty(resource, "group", "request.resource"),
                Json.stringOrEmpty(resource, "version", "request.resource"),
                Json.stringOrEmpty(resource, "resource", "request.resource"));
        return new AdmissionRequest(uid, gvr,
                Json.stringOrEmpty(request, "subResource", "request"),
                required(request, "operation"),
                Json.stringOrEmpty(request, "namespace", "request"),
                Json.stringOrEmpty(request, "name", "request"),
                userInfo(Json.object(request, "userInfo", "request")),
                Json.object(request, "object", "request"),
                Boolean.TRUE.equals(Json.bool(request, "dryRun", "request")));
    }

    /** The response review for {@code uid} (which may be null when the request never said it). */
    public static byte[] write(String uid, Verdict verdict) {
        String encoded = verdict instanceof Verdict.Patched patched
                ? Base64.getEncoder().encodeToString(patched.patch().getBytes(StandardCharsets.UTF_8)) : null;
        StringWriter text = new StringWriter(256 + (encoded == null ? 0 : encoded.length()));
        try (JsonWriter out = new JsonWriter(text)) {
            out.beginObject().name("apiVersion").value(API_VERSION).name("kind").value(KIND);
            out.name("response").beginObject().name("uid").value(uid == null ? "" : uid)
                    .name("allowed").value(verdict.allowed());
            if (verdict instanceof Verdict.Denied denied) {
                out.name("status").beginObject().name("code").value(denied.code())
                        .name("reason").value(denied.reason()).name("message").value(denied.message()).endObject();
            }
            if (encoded != null) {
                out.name("patchType").value("JSONPatch").name("patch").value(encoded);
            }
            if (!verdict.warnings().isEmpty()) {
                out.name("warnings").beginArray();
                for (String warning : verdict.warnings()) {
                    out.value(warning);
                }
                out.endArray();
            }
            out.endObject().endObject();
        } catch (IOException e) {
            throw new UncheckedIOException(e); // a StringWriter does not fail
        }
        return text.toString().getBytes(StandardCharsets.UTF_8);
    }

    private static JsonObject parse(byte[] body) throws InvalidReviewException {
        if (body.length == 0) {
            throw new InvalidReviewException("AdmissionReview: the request body is empty");
        }
        try (JsonReader reader = new JsonReader(new StringReader(new String(body, StandardCharsets.UTF_8)))) {
            reader.setStrictness(Strictness.STRICT);
            reader.setNestingLimit(100);
            JsonElement root = reader.peek() == JsonToken.BEGIN_OBJECT ? object(reader, Part.REVIEW)
                    : JsonParser.parseReader(reader);
            if (!atEnd(reader)) {
                throw new InvalidReviewException("AdmissionReview: not JSON: data after the end of the document");
            }
            if (!root.isJsonObject()) {
                throw new InvalidReviewException("AdmissionReview: must be a JSON object");
            }
            return root.getAsJsonObject();
        } catch (JsonParseException | IOException | IllegalStateException e) {
            // Gson wraps the reader's own exception; its message is the useful one
            Throwable cause = e instanceof JsonParseException && e.getCause() != null ? e.getCause() : e;
            throw new InvalidReviewException("AdmissionReview: not JSON: " + firstLine(cause.getMessage()));
        }
    }

    /**
     * The objects on the way to the pod's metadata, read member by member so that what no rule reads is
     * skipped rather than built: the old object of an update and the object's managedFields, often the larger
     * part of a review. Every other value is read as Gson reads it.
     */
    private enum Part {
        REVIEW, REQUEST, OBJECT, METADATA, OTHER;

        /** The part a member of this part is, or null when the member is skipped. */
        Part member(String name) {
            return switch (this) {
                case REVIEW -> name.equals("request") ? REQUEST : OTHER;
                case REQUEST -> name.equals("oldObject") ? null : name.equals("object") ? OBJECT : OTHER;
                case OBJECT -> name.equals("metadata") ? METADATA : OTHER;
                case METADATA -> name.equals("managedFields") ? null : OTHER;
                case OTHER -> OTHER;
            };
        }
    }

    private static JsonObject object(JsonReader reader, Part part) throws IOException {
        JsonObject object = new JsonObject();
        reader.beginObject();
        while (reader.hasNext()) {
            String name = reader.nextName();
            Part member = part.member(name);
            if (member == null) {
                reader.skipValue();
            } else if (member != Part.OTHER && reader.peek() == JsonToken.BEGIN_OBJECT) {
                object.add(name, object(reader, member));
            } else {
                object.add(name, JsonParser.parseReader(reader));
            }
        }
        reader.endObject();
        return object;
    }

    private static boolean atEnd(JsonReader reader) {
        try {
            return reader.peek() == JsonToken.END_DOCUMENT;
        } catch (IOException | RuntimeException e) {
            return false;
        }
    }

    private static AdmissionRequest.UserInfo userInfo(JsonObject user) throws InvalidReviewException {
        Map<String, List<String>> extra = new LinkedHashMap<>();
        JsonObject extras = Json.object(user, "extra", "request.userInfo");
        if (extras != null) {
            for (String key : extras.keySet()) {
                extra.put(key, Json.strings(extras, key, "request.userInfo.extra"));
            }
        }
        return new AdmissionRequest.UserInfo(Json.stringOrEmpty(user, "username", "request.userInfo"),
                Json.stringOrEmpty(user, "uid", "request.userInfo"),
                Json.strings(user, "groups", "request.userInfo"), extra);
    }

    private static String required(JsonObject request, String field) throws InvalidReviewException {
        String value = Json.string(request, field, "request");
        if (value == null || value.isEmpty()) {
            throw new InvalidReviewException("request." + field + ": required");
        }
        return value;
    }

    private static String stringOrNull(JsonObject request, String field) {
        JsonElement value = request.get(field);
        return value != null && value.isJsonPrimitive() && value.getAsJsonPrimitive().isString()
                ? value.getAsString() : null;
    }

    private static String quote(String value) {
        return value == null ? "none" : "\"" + value + "\"";
    }

    private static String firstLine(String message) {
        if (message == null) {
            return "malformed";
        }
        int newline = message.indexOf('\n');
        String line = (newline < 0 ? message : message.substring(0, newline))
                .replace("Use JsonReader.setStrictness(Strictness.LENIENT) to accept malformed JSON", "malformed JSON");
        return line.length() > 200 ? line.substring(0, 200) + "…" : line;
    }
}
