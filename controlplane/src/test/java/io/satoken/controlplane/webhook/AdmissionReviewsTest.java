package io.satoken.controlplane.webhook;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.google.gson.JsonObject;
import com.google.gson.JsonParser;
import io.satoken.controlplane.admission.AdmissionRequest;
import io.satoken.controlplane.admission.Verdict;
import io.satoken.controlplane.admission.view.InvalidReviewException;
import java.nio.charset.StandardCharsets;
import java.util.Base64;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;
import org.junit.jupiter.api.Test;

/** Reading AdmissionReview v1 requests strictly, and writing responses the API server accepts. */
class AdmissionReviewsTest {

    static final String VALID = "{\"apiVersion\":\"admission.k8s.io/v1\",\"kind\":\"AdmissionReview\",\"request\":{"
            + "\"uid\":\"705ab4f5\",\"kind\":{\"group\":\"\",\"version\":\"v1\",\"kind\":\"Pod\"},\"resource\":{\"group\":\"\","
            + "\"version\":\"v1\",\"resource\":\"pods\"},\"operation\":\"CREATE\",\"namespace\":\"ns\",\"userInfo\":{"
            + "\"username\":\"system:serviceaccount:a:b\",\"groups\":[\"system:authenticated\"],\"extra\":{"
            + "\"authentication.kubernetes.io/pod-name\":[\"agent-x\"]}},\"object\":{\"kind\":\"Pod\"},\"dryRun\":true}}";

    record Malformed(String name, String body, String message) {
        @Override
        public String toString() {
            return name;
        }
    }

    static Stream<Malformed> malformed() {
        return Stream.of(
                new Malformed("empty body", "", "AdmissionReview: the request body is empty"),
                new Malformed("not JSON", "<xml/>", "AdmissionReview: not JSON: "),
                new Malformed("lenient JSON is not JSON", "{apiVersion: 'x'}", "AdmissionReview: not JSON: "),
                new Malformed("trailing data", VALID + "{}", "AdmissionReview: not JSON: data after the end"),
                new Malformed("a list", "[]", "AdmissionReview: must be a JSON object"),
                new Malformed("wrong version", VALID.replace("admission.k8s.io/v1", "admission.k8s.io/v1beta1"),
                        "AdmissionReview: expected apiVersion admission.k8s.io/v1 and kind AdmissionReview, got "
                                + "apiVersion \"admission.k8s.io/v1beta1\" and kind \"AdmissionReview\""),
                new Malformed("wrong kind", VALID.replace("\"AdmissionReview\"", "\"ConversionReview\""),
                        "AdmissionReview: expected apiVersion admission.k8s.io/v1 and kind AdmissionReview, got "
                                + "apiVersion \"admission.k8s.io/v1\" and kind \"ConversionReview\""),
                new Malformed("no request", "{\"apiVersion\":\"admission.k8s.io/v1\",\"kind\":\"AdmissionReview\"}",
                        "AdmissionReview.request: required"),
                new Malformed("no uid", VALID.replace("\"uid\":\"705ab4f5\",", ""), "request.uid: required"),
                new Malformed("no operation", VALID.replace("\"operation\":\"CREATE\",", ""),
                        "request.operation: required"),
                new Malformed("object of the wrong type", VALID.replace("\"object\":{\"kind\":\"Pod\"}", "\"object\":7"),
                        "request.object: must be an object, got a number"),
                new Malformed("extra of the wrong type", VALID.replace("[\"agent-x\"]", "\"agent-x\""),
                        "request.userInfo.extra.authentication.kubernetes.io/pod-name: must be a list, got a string"),
                new Malformed("deeply nested", "{\"a\":" + "[".repeat(5000) + "]".repeat(5000) + "}",
                        "AdmissionReview: nested more than 64 levels deep at $.a[0][0]"));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource
    void malformed(Malformed c) {
        assertThatThrownBy(() -> AdmissionReviews.read(c.body().getBytes(StandardCharsets.UTF_8), new String[1]))
                .isInstanceOf(InvalidReviewException.class)
                .hasMessageStartingWith(c.message());
    }

    @Test
    void read_validReview_isRead() throws Exception {
        String[] uid = new String[1];
        AdmissionRequest request = AdmissionReviews.read(VALID.getBytes(StandardCharsets.UTF_8), uid);

        assertThat(uid[0]).isEqualTo("705ab4f5");
        assertThat(request.resource().isCore("pods")).isTrue();
        assertThat(request.isCreate()).isTrue();
        assertThat(request.dryRun()).isTrue();
        assertThat(request.userInfo().extraValue("authentication.kubernetes.io/pod-name")).isEqualTo("agent-x");
        assertThat(request.object().get("kind").getAsString()).isEqualTo("Pod");
    }

    @Test
    void read_whatNoRuleReads_skipped_whatTheyReadKept() throws Exception {
        String body = VALID.replace("\"object\":{\"kind\":\"Pod\"}", "\"oldObject\":{\"kind\":\"Pod\",\"spec\":{}},"
                + "\"object\":{\"kind\":\"Pod\",\"metadata\":{\"name\":\"p\",\"labels\":{\"a\":\"b\"},"
                + "\"annotations\":{\"x\":\"y\",\"satoken.io/projections\":\"- audience: a\"},"
                + "\"managedFields\":[{\"manager\":\"m\",\"fieldsV1\":{\"f:spec\":{}}}]},"
                + "\"spec\":{\"containers\":[{\"name\":\"c\",\"image\":\"i\",\"env\":[{\"name\":\"managedFields\","
                + "\"value\":\"v\"}]}]},\"status\":{}}");

        AdmissionRequest request = AdmissionReviews.read(body.getBytes(StandardCharsets.UTF_8), new String[1]);

        assertThat(request.object()).isEqualTo(JsonParser.parseString("{\"kind\":\"Pod\",\"metadata\":{\"name\":\"p\","
                + "\"annotations\":{\"satoken.io/projections\":\"- audience: a\"}},\"spec\":{\"containers\":[{"
                + "\"name\":\"c\",\"env\":[{\"name\":\"managedFields\"}]}]}}"));
    }

    @Test
    void read_skippedPartNotJson_rejected() {
        String body = VALID.replace("\"object\":", "\"oldObject\":{\"a\" 1},\"object\":");

        assertThatThrownBy(() -> AdmissionReviews.read(body.getBytes(StandardCharsets.UTF_8), new String[1]))
                .isInstanceOf(InvalidReviewException.class).hasMessageStartingWith("AdmissionReview: not JSON: ");
    }

    @Test
    void read_restMalformed_uidStillKnownForTheAnswer() {
        String[] uid = new String[1];
        assertThatThrownBy(() -> AdmissionReviews.read(VALID.replace("admission.k8s.io/v1", "v2")
                .getBytes(StandardCharsets.UTF_8), uid)).isInstanceOf(InvalidReviewException.class);
        assertThat(uid[0]).isEqualTo("705ab4f5");
    }

    @Test
    void write_allowed_carriesBase64JsonPatch() {
        String patch = "[{\"op\":\"add\",\"path\":\"/spec/x\",\"value\":1}]";

        JsonObject review = JsonParser.parseString(new String(AdmissionReviews.write("u1", Verdict.patch(patch)),
                StandardCharsets.UTF_8)).getAsJsonObject();

        assertThat(review.get("apiVersion").getAsString()).isEqualTo("admission.k8s.io/v1");
        assertThat(review.get("kind").getAsString()).isEqualTo("AdmissionReview");
        JsonObject response = review.getAsJsonObject("response");
        assertThat(response.get("uid").getAsString()).isEqualTo("u1");
        assertThat(response.get("allowed").getAsBoolean()).isTrue();
        assertThat(response.get("patchType").getAsString()).isEqualTo("JSONPatch");
        assertThat(JsonParser.parseString(new String(Base64.getDecoder().decode(response.get("patch").getAsString()),
                StandardCharsets.UTF_8))).isEqualTo(JsonParser.parseString(patch));
        assertThat(response.has("status")).isFalse();
    }

    @Test
    void write_denied_carriesCodeReasonAndMessageNoPatch() {
        JsonObject response = JsonParser.parseString(new String(AdmissionReviews.write(null,
                Verdict.forbidden("no")), StandardCharsets.UTF_8)).getAsJsonObject().getAsJsonObject("response");

        assertThat(response.get("uid").getAsString()).isEmpty();
        assertThat(response.get("allowed").getAsBoolean()).isFalse();
        assertThat(response.has("patch")).isFalse();
        JsonObject status = response.getAsJsonObject("status");
        assertThat(status.get("code").getAsInt()).isEqualTo(403);
        assertThat(status.get("reason").getAsString()).isEqualTo("Forbidden");
        assertThat(status.get("message").getAsString()).isEqualTo("no");
    }

    @Test
    void write_eachKindOfVerdict_byteForByteAsBefore() {
        String head = "{\"apiVersion\":\"admission.k8s.io/v1\",\"kind\":\"AdmissionReview\",\"response\":{\"uid\":\"u1\",";

        assertThat(written(Verdict.allow())).isEqualTo(head + "\"allowed\":true}}");
        assertThat(written(Verdict.patch("[]"))).isEqualTo(head + "\"allowed\":true,\"patchType\":\"JSONPatch\","
                + "\"patch\":\"W10=\"}}");
        assertThat(written(Verdict.deny(422, "Invalid", "<bad> & \"worse\""))).isEqualTo(head + "\"allowed\":false,"
                + "\"status\":{\"code\":422,\"reason\":\"Invalid\",\"message\":\"<bad> & \\\"worse\\\"\"}}}");
    }

    @Test
    void write_warnings_onAnAllowedOrPatchedReview_asAListOfStrings() {
        String head = "{\"apiVersion\":\"admission.k8s.io/v1\",\"kind\":\"AdmissionReview\",\"response\":{\"uid\":\"u1\",";

        assertThat(written(Verdict.allow().withWarnings(List.of("one \"quoted\"", "two"))))
                .isEqualTo(head + "\"allowed\":true,\"warnings\":[\"one \\\"quoted\\\"\",\"two\"]}}");
        assertThat(written(Verdict.patch("[]").withWarnings(List.of("w")))).isEqualTo(head + "\"allowed\":true,"
                + "\"patchType\":\"JSONPatch\",\"patch\":\"W10=\",\"warnings\":[\"w\"]}}");
        assertThat(Verdict.forbidden("no").withWarnings(List.of("w")).warnings()).as("a denial's message says it")
                .isEmpty();
    }

    private static String written(Verdict verdict) {
        return new String(AdmissionReviews.write("u1", verdict), StandardCharsets.UTF_8);
    }
}
