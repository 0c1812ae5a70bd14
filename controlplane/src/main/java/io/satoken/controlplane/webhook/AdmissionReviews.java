package io.satoken.controlplane.webhook;

import com.google.gson.JsonElement;
import com.google.gson.JsonObject;
import com.google.gson.stream.JsonWriter;
import io.satoken.controlplane.admission.AdmissionRequest;
import io.satoken.controlplane.admission.Verdict;
import io.satoken.controlplane.admission.view.InvalidReviewException;
import io.satoken.controlplane.admission.view.Json;
import java.io.IOException;
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
 * <p>The body is parsed strictly (RFC 8259, nothing after the document) by {@link ReviewReader}, which keeps only
 * what the rules read; every shape error names the field, so a malformed review is answered with a denied review
 * that says what was wrong.
 */
public final class AdmissionReviews {

    static final String API_VERSION = "admission.k8s.io/v1";
    static final String KIND = "AdmissionReview";

    private AdmissionReviews() {
    }

    /** Parses a review; {@code uidOut[0]} receives the request's uid as soon as it is known, for the error answer. */
    public static AdmissionRequest read(byte[] body, String[] uidOut) throws InvalidReviewException {
        try {
            return read(body, uidOut, ReviewReader.Charge.NONE);
        } catch (ReviewOverloadException e) {
            throw new IllegalStateException("nothing is claimed, so nothing is refused", e);
        }
    }

    /**
     * Parses a review as {@link #read(byte[], String[])} does, claiming what the parse keeps from {@code charge}.
     *
     * @throws ReviewOverloadException when {@code charge} refuses it
     */
    static AdmissionRequest read(byte[] body, String[] uidOut, ReviewReader.Charge charge)
            throws InvalidReviewException, ReviewOverloadException {
        JsonObject review = ReviewReader.read(body, charge).review();
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
}
