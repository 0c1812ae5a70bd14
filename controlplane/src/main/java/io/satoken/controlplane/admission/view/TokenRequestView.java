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

    private static final String SPEC_PATH = "request.object.spec";

    /** A TokenRequest under review: the review's object includes it. */
    public static final Field.Obj TOKEN_REQUEST = Field.root();
    private static final Field.Obj SPEC = TOKEN_REQUEST.object("spec");
    private static final Field.Obj BOUND_OBJECT_REF = SPEC.object("boundObjectRef");
    private static final Field.Str BOUND_KIND = BOUND_OBJECT_REF.string("kind");
    private static final Field.Str BOUND_NAME = BOUND_OBJECT_REF.string("name");
    private static final Field.Str BOUND_UID = BOUND_OBJECT_REF.string("uid");
    private static final Field.Strs AUDIENCES = SPEC.strings("audiences");
    private static final Field.Scalar EXPIRATION_SECONDS = SPEC.scalar("expirationSeconds");

    private final JsonObject object;

    public TokenRequestView(JsonObject object) {
        this.object = object;
    }

    /** {@code spec.boundObjectRef}; its fields read as Go's zero values: "" when absent. */
    public record BoundObjectRef(JsonObject ref) {
        private static final String PATH = SPEC_PATH + ".boundObjectRef";

        public boolean present() {
            return ref != null;
        }

        public String kind() throws InvalidReviewException {
            return BOUND_KIND.readOrEmpty(ref, PATH);
        }

        public String name() throws InvalidReviewException {
            return BOUND_NAME.readOrEmpty(ref, PATH);
        }

        public String uid() throws InvalidReviewException {
            return BOUND_UID.readOrEmpty(ref, PATH);
        }
    }

    public BoundObjectRef boundObjectRef() throws InvalidReviewException {
        return new BoundObjectRef(BOUND_OBJECT_REF.read(spec(), SPEC_PATH));
    }

    /** {@code spec.audiences}; empty when absent. */
    public List<String> audiences() throws InvalidReviewException {
        return AUDIENCES.read(spec(), SPEC_PATH);
    }

    /** {@code spec.expirationSeconds}; 3600 when absent, the API server's default (PV-2). */
    public long expirationSeconds() throws InvalidReviewException {
        JsonElement value = EXPIRATION_SECONDS.read(spec());
        if (value == null) {
            return ProjectionSpec.DEFAULT_EXPIRATION_SECONDS;
        }
        if (!value.isJsonPrimitive() || !value.getAsJsonPrimitive().isNumber()) {
            throw new InvalidReviewException(SPEC_PATH + ".expirationSeconds: must be a number");
        }
        return value.getAsLong();
    }

    private JsonObject spec() throws InvalidReviewException {
        return SPEC.read(object, "request.object");
    }
}
