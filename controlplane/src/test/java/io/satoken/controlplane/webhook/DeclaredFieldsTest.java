package io.satoken.controlplane.webhook;

import static org.assertj.core.api.Assertions.assertThat;

import com.google.gson.JsonArray;
import com.google.gson.JsonElement;
import com.google.gson.JsonObject;
import com.google.gson.JsonPrimitive;
import io.satoken.controlplane.admission.view.Field;
import io.satoken.controlplane.admission.view.ReviewShape;
import java.nio.charset.StandardCharsets;
import java.util.List;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The shape the reader keeps is derived from the fields the views and the rules declare: a review holding a value at
 * every declared field is read back whole, and nothing else of it is kept, so a rule never reads as absent a field it
 * declared.
 */
class DeclaredFieldsTest {

    private static final String UNDECLARED = "undeclared-member";

    @BeforeAll
    static void rulesDeclareTheirFields() throws ClassNotFoundException {
        // the webhook builds its rules before it reads a review; so do these tests
        for (String rule : List.of("PodMutation", "ServiceAccountAdmission", "AgentTokenInjection")) {
            Class.forName("io.satoken.controlplane.admission." + rule, true, DeclaredFieldsTest.class.getClassLoader());
        }
    }

    @Test
    void everyDeclaredField_isInTheDerivedShape_andKeptByTheReader() throws Exception {
        JsonObject review = sample(AdmissionReviews.REVIEW, false, false);

        JsonObject kept = ReviewReader.read(review.toString().getBytes(StandardCharsets.UTF_8),
                ReviewReader.Charge.NONE).review();

        assertThat(kept).isEqualTo(review);
        assertThat(review.getAsJsonObject("request").getAsJsonObject("object").getAsJsonObject("metadata")
                .getAsJsonObject("annotations").keySet())
                .contains("kubernetes.io/config.mirror", "satoken.io/projections", "satoken.io/mount-path");
        assertThat(((ReviewShape.Members) AdmissionReviews.REVIEW.shape()).named()).containsKeys("apiVersion", "kind",
                "request");
    }

    @Test
    void aMemberNoFieldDeclares_isNotKept() throws Exception {
        JsonObject withUndeclared = sample(AdmissionReviews.REVIEW, true, false);

        JsonObject kept = ReviewReader.read(withUndeclared.toString().getBytes(StandardCharsets.UTF_8),
                ReviewReader.Charge.NONE).review();

        assertThat(withUndeclared.toString()).contains(UNDECLARED);
        assertThat(kept).isEqualTo(sample(AdmissionReviews.REVIEW, false, false));
    }

    /**
     * A value at every member declared under {@code object}; with {@code undeclared}, one more in every object, as
     * there is in every object kept whole ({@code inWhole}).
     */
    private static JsonObject sample(Field.Obj object, boolean undeclared, boolean inWhole) {
        boolean whole = inWhole || object.keptWhole();
        JsonObject json = new JsonObject();
        for (Field member : object.members()) {
            JsonElement value = sample(member, undeclared, whole);
            JsonElement there = json.get(member.name());
            if (there != null && there.isJsonObject() && value.isJsonObject()) { // declared on two included roots
                value.getAsJsonObject().entrySet().forEach(e -> there.getAsJsonObject().add(e.getKey(), e.getValue()));
            } else {
                json.add(member.name(), value);
            }
        }
        if (undeclared || whole) { // a whole object keeps what no field declares
            json.add(UNDECLARED, new JsonPrimitive("x"));
        }
        return json;
    }

    private static JsonElement sample(Field member, boolean undeclared, boolean inWhole) {
        if (member instanceof Field.Obj object) {
            return sample(object, undeclared, inWhole);
        }
        if (member instanceof Field.Items items) {
            JsonArray list = new JsonArray();
            list.add(sample(items.item(), undeclared, inWhole));
            return list;
        }
        if (member instanceof Field.Str) {
            return new JsonPrimitive("s");
        }
        if (member instanceof Field.Bool) {
            return new JsonPrimitive(true);
        }
        if (member instanceof Field.Scalar) {
            return new JsonPrimitive(7);
        }
        JsonArray strings = new JsonArray();
        strings.add("s");
        if (member instanceof Field.Strs) {
            return strings;
        }
        JsonObject map = new JsonObject();
        map.add("key", member instanceof Field.StringMap ? new JsonPrimitive("s") : strings);
        return map;
    }
}
