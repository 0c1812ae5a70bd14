package io.satoken.controlplane.webhook;

import com.google.gson.JsonObject;
import com.google.gson.stream.JsonWriter;
import io.satoken.controlplane.admission.AdmissionRequest;
import io.satoken.controlplane.admission.Verdict;
import io.satoken.controlplane.admission.view.Field;
import io.satoken.controlplane.admission.view.InvalidReviewException;
import io.satoken.controlplane.admission.view.PodView;
import io.satoken.controlplane.admission.view.TokenRequestView;
import java.io.IOException;
import java.io.StringWriter;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.Base64;
import java.util.List;
import java.util.Map;

/**
 * Reads an {@code admission.k8s.io/v1} AdmissionReview request and writes its response.
 *
 * <p>The body is parsed strictly (RFC 8259, nothing after the document) by {@link ReviewReader}, which keeps only
 * what the rules read: the {@link Field}s declared under {@link #REVIEW}, here and by the views and rules of the object
 * under review; every shape error names the field, so a malformed review is answered with a denied review that says
 * what was wrong.
 */
public final class AdmissionReviews {

    static final String API_VERSION = "admission.k8s.io/v1";
    static final String KIND = "AdmissionReview";

    /** The review: {@link ReviewReader} keeps what is declared under it. */
    static final Field.Obj REVIEW = Field.root();
    private static final Field.Str API_VERSION_FIELD = REVIEW.string("apiVersion");
    private static final Field.Str KIND_FIELD = REVIEW.string("kind");
    private static final Field.Obj REQUEST = REVIEW.object("request");
    private static final Field.Str UID = REQUEST.string("uid");
    private static final Field.Obj RESOURCE = REQUEST.object("resource");
    private static final Field.Str GROUP = RESOURCE.string("group");
    private static final Field.Str VERSION = RESOURCE.string("version");
    private static final Field.Str RESOURCE_NAME = RESOURCE.string("resource");
    private static final Field.Str SUB_RESOURCE = REQUEST.string("subResource");
    private static final Field.Str OPERATION = REQUEST.string("operation");
    private static final Field.Str NAMESPACE = REQUEST.string("namespace");
    private static final Field.Str NAME = REQUEST.string("name");
    private static final Field.Obj USER_INFO = REQUEST.object("userInfo");
    private static final Field.Str USERNAME = USER_INFO.string("username");
    private static final Field.Str USER_UID = USER_INFO.string("uid");
    private static final Field.Strs GROUPS = USER_INFO.strings("groups");
    private static final Field.StringListMap EXTRA = USER_INFO.stringListMap("extra");
    /** {@code request.object}: a pod or a TokenRequest, whose views declare what is read of them. */
    private static final Field.Obj OBJECT = REQUEST.object("object", PodView.POD, TokenRequestView.TOKEN_REQUEST);
    private static final Field.Bool DRY_RUN = REQUEST.bool("dryRun");

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
        JsonObject request = REQUEST.read(review, "AdmissionReview");
        if (request != null) {
            uidOut[0] = UID.readIfString(request);
        }
        String apiVersion = API_VERSION_FIELD.read(review, "AdmissionReview");
        String kind = KIND_FIELD.read(review, "AdmissionReview");
        if (!API_VERSION.equals(apiVersion) || !KIND.equals(kind)) {
            throw new InvalidReviewException("AdmissionReview: expected apiVersion " + API_VERSION + " and kind " + KIND
                    + ", got apiVersion " + quote(apiVersion) + " and kind " + quote(kind));
        }
        if (request == null) {
            throw new InvalidReviewException("AdmissionReview.request: required");
        }
        String uid = required(request, UID);
        JsonObject resource = RESOURCE.read(request, "request");
        if (resource == null) {
            throw new InvalidReviewException("request.resource: required");
        }
        AdmissionRequest.GroupVersionResource gvr = new AdmissionRequest.GroupVersionResource(
                GROUP.readOrEmpty(resource, "request.resource"),
                VERSION.readOrEmpty(resource, "request.resource"),
                RESOURCE_NAME.readOrEmpty(resource, "request.resource"));
        return new AdmissionRequest(uid, gvr,
                SUB_RESOURCE.readOrEmpty(request, "request"),
                required(request, OPERATION),
                NAMESPACE.readOrEmpty(request, "request"),
                NAME.readOrEmpty(request, "request"),
                userInfo(USER_INFO.read(request, "request")),
                OBJECT.read(request, "request"),
                Boolean.TRUE.equals(DRY_RUN.read(request, "request")));
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
        Map<String, List<String>> extra = EXTRA.read(user, "request.userInfo");
        return new AdmissionRequest.UserInfo(USERNAME.readOrEmpty(user, "request.userInfo"),
                USER_UID.readOrEmpty(user, "request.userInfo"), GROUPS.read(user, "request.userInfo"), extra);
    }

    private static String required(JsonObject request, Field.Str field) throws InvalidReviewException {
        String value = field.read(request, "request");
        if (value == null || value.isEmpty()) {
            throw new InvalidReviewException("request." + field.name() + ": required");
        }
        return value;
    }

    private static String quote(String value) {
        return value == null ? "none" : "\"" + value + "\"";
    }
}
