package io.satoken.controlplane.admission.view;

import com.google.gson.JsonElement;
import com.google.gson.JsonObject;
import io.satoken.common.projection.ProjectionSpec;
import java.util.List;

/**
 * What {@code admission.NodeTokenRestriction} reads of a TokenRequest under admission, typed, over its JSON: as
 * {@link PodView} does for pods, each field is read when asked for and a field of the wrong type is an
 * {@link InvalidReviewException} naming its path.
 */
public final class TokenRequestView {

    private static final String SPEC = "request.object.spec";

    private final JsonObject object;

    public TokenRequestView(JsonObject object) {
        this.object = object;
    }

    /** {@code spec.boundObjectRef}; its fields read as Go's zero values: "" when absent. */
    public record BoundObjectRef(JsonObject ref) {
        private static final String PATH = SPEC + ".boundObjectRef";

        public boolean present() {
            return ref != null;
        }

        public String kind() throws InvalidReviewException {
            return Json.stringOrEmpty(ref, "kind", PATH);
        }

        public String name() throws InvalidReviewException {
            return Json.stringOrEmpty(ref, "name", PATH);
        }

        public String uid() throws InvalidReviewException {
            return Json.stringOrEmpty(ref, "uid", PATH);
        }
    }

    public BoundObjectRef boundObjectRef() throws InvalidReviewException {
        return new BoundObjectRef(Json.object(spec(), "boundObjectRef", SPEC));
    }

    /** {@code spec.audiences}; empty when absent. */
    public List<String> audiences() throws InvalidReviewException {
        return Json.strings(spec(), "audiences", SPEC);
    }

    /** {@code spec.expirationSeconds}; 3600 when absent, the API server's default (PV-2). */
    public long expirationSeconds() throws InvalidReviewException {
        JsonObject spec = spec();
        JsonElement value = spec == null ? null : spec.get("expirationSeconds");
        if (value == null || value.isJsonNull()) {
            return ProjectionSpec.DEFAULT_EXPIRATION_SECONDS;
        }
        if (!value.isJsonPrimitive() || !value.getAsJsonPrimitive().isNumber()) {
            throw new InvalidReviewException(SPEC + ".expirationSeconds: must be a number");
        }
        return value.getAsLong();
    }

    private JsonObject spec() throws InvalidReviewException {
        return Json.object(object, "spec", "request.object");
    }
}
