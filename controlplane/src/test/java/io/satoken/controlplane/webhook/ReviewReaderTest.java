package io.satoken.controlplane.webhook;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.google.gson.JsonElement;
import com.google.gson.JsonObject;
import com.google.gson.JsonParser;
import io.satoken.controlplane.admission.AdmissionRequest;
import io.satoken.controlplane.admission.view.InvalidReviewException;
import io.satoken.controlplane.admission.view.PodView;
import io.satoken.controlplane.admission.view.TokenRequestView;
import io.satoken.common.testing.ModelSamples;
import io.satoken.controlplane.bench.WebhookLoad;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The review read streaming: only what the rules read is kept, and a body whose kept part would amplify it, or
 * that nests too deep, is refused (400). The bodies are those of the webhook's security review: a list of empty
 * lists, which Gson keeps at about 15 times its size, and empty objects where the rules read a list of them.
 */
class ReviewReaderTest {

    static final int MIB = 1024 * 1024;

    @Test
    void nestedEmptyLists_inAFieldNoRuleReads_areSkipped_keepingAlmostNothing() throws Exception {
        byte[] body = nestedLists("{\"kind\":\"Pod\",\"spec\":{\"affinity\":$,\"containers\":[{\"name\":\"c\"}]}}",
                MIB);

        AdmissionRequest request = AdmissionReviews.read(body, new String[1]);
        ReviewReader.Read read = ReviewReader.read(body, ReviewReader.Charge.NONE);

        // Gson's tree of it held 14.8 times the body (BENCHMARKS.md, "Admission review memory")
        assertThat(request.object().getAsJsonObject("spec").has("affinity")).isFalse();
        assertThat(request.object().getAsJsonObject("spec").getAsJsonArray("containers")).hasSize(1);
        assertThat(read.retainedBytes()).isLessThan(4096);
    }

    @Test
    void nestedEmptyLists_whereARuleKeepsTheValueWhole_refusedAsAmplification() {
        byte[] body = nestedLists("{\"kind\":\"Pod\",\"spec\":{\"volumes\":[{\"name\":\"v\",\"csi\":{\"x\":$}}]}}",
                MIB);

        assertThatThrownBy(() -> AdmissionReviews.read(body, new String[1]))
                .isInstanceOf(InvalidReviewException.class)
                .hasMessageStartingWith("AdmissionReview: the fields the admission rules read would take more than "
                        + (8L * body.length + 256 * 1024) + " bytes of memory for a body of " + body.length + " bytes")
                .hasMessageContaining("at $.request.object.spec.volumes[0].csi.x[")
                .hasMessageEndingWith("refused as an amplification");
    }

    @Test
    void emptyContainers_listTheRulesRead_refusedAsAmplification() {
        byte[] body = new String(nestedLists("{\"kind\":\"Pod\",\"spec\":{\"containers\":$}}", MIB),
                StandardCharsets.US_ASCII).replace("[],", "{},").replace("[]]", "{}]").getBytes(StandardCharsets.US_ASCII);

        assertThatThrownBy(() -> AdmissionReviews.read(body, new String[1]))
                .isInstanceOf(InvalidReviewException.class)
                .hasMessageContaining("at $.request.object.spec.containers[")
                .hasMessageEndingWith("refused as an amplification");
    }

    @Test
    void realPod_keepsLessThanItsBodyTimesThree_andEveryFieldTheRulesRead() throws Exception {
        byte[] body = WebhookLoad.admissionReview("u-1", "orders").getBytes(StandardCharsets.UTF_8);

        ReviewReader.Read read = ReviewReader.read(body, ReviewReader.Charge.NONE);

        assertThat(read.retainedBytes()).isLessThan(3L * body.length);
        JsonObject spec = read.review().getAsJsonObject("request").getAsJsonObject("object").getAsJsonObject("spec");
        assertThat(spec.getAsJsonArray("containers").get(0).getAsJsonObject().keySet())
                .containsExactlyInAnyOrder("name", "env", "volumeMounts");
        assertThat(spec.getAsJsonArray("initContainers").get(0).getAsJsonObject().getAsJsonArray("env").get(0)
                .getAsJsonObject().getAsJsonObject("valueFrom").getAsJsonObject("secretKeyRef").keySet())
                .containsExactly("name");
    }

    /** A newer API server's review: members this version does not know, in every object at every level. */
    @Test
    void unknownMembersAtEveryLevel_areSkipped_andTheKnownOnesReadTheSame() throws Exception {
        String review = WebhookLoad.admissionReview("u-1", "orders");
        JsonObject withUnknown = JsonParser.parseString(review).getAsJsonObject();
        addEverywhere(withUnknown);

        JsonObject read = ReviewReader.read(withUnknown.toString().getBytes(StandardCharsets.UTF_8),
                ReviewReader.Charge.NONE).review();

        assertThat(withUnknown.toString()).contains(ModelSamples.UNKNOWN_FIELD);
        removeEverywhere(read); // where a map keeps every member (labels, annotations), it is kept as one
        assertThat(read).isEqualTo(ReviewReader.read(review.getBytes(StandardCharsets.UTF_8),
                ReviewReader.Charge.NONE).review());
    }

    private static void addEverywhere(JsonElement element) {
        if (element.isJsonObject()) {
            element.getAsJsonObject().entrySet().forEach(e -> addEverywhere(e.getValue()));
            element.getAsJsonObject().add(ModelSamples.UNKNOWN_FIELD, ModelSamples.unknownValue());
        } else if (element.isJsonArray()) {
            element.getAsJsonArray().forEach(ReviewReaderTest::addEverywhere);
        }
    }

    private static void removeEverywhere(JsonElement element) {
        if (element.isJsonObject()) {
            element.getAsJsonObject().remove(ModelSamples.UNKNOWN_FIELD);
            element.getAsJsonObject().entrySet().forEach(e -> removeEverywhere(e.getValue()));
        } else if (element.isJsonArray()) {
            element.getAsJsonArray().forEach(ReviewReaderTest::removeEverywhere);
        }
    }

    @Test
    void valueOfAnotherType_keptEmpty_soTheRuleStillNamesTheFieldAndItsType() throws Exception {
        byte[] body = review("{\"kind\":\"Pod\",\"spec\":{\"containers\":\"" + "x".repeat(MIB) + "\","
                + "\"volumes\":[[[[]]]],\"imagePullSecrets\":{\"a\":[1,2,3]}}}");

        ReviewReader.Read read = ReviewReader.read(body, ReviewReader.Charge.NONE);
        PodView pod = new PodView(read.review().getAsJsonObject("request").getAsJsonObject("object"),
                read.review().getAsJsonObject("request").getAsJsonObject("object").getAsJsonObject("spec"));

        assertThat(read.retainedBytes()).isLessThan(4096);
        assertThatThrownBy(() -> pod.containers(PodView.CONTAINERS)).hasMessage("spec.containers: must be a list, got a string");
        assertThatThrownBy(pod::volumes).hasMessage("spec.volumes[0]: must be an object, got a list");
        assertThatThrownBy(pod::imagePullSecrets).hasMessage("spec.imagePullSecrets: must be a list, got an object");
    }

    @Test
    void tokenRequest_fieldsTheTokenRuleReads_kept() throws Exception {
        byte[] body = review("{\"kind\":\"TokenRequest\",\"apiVersion\":\"authentication.k8s.io/v1\",\"metadata\":"
                + "{\"name\":\"agent\",\"creationTimestamp\":null},\"spec\":{\"audiences\":[\"vault\"],"
                + "\"expirationSeconds\":3600,\"boundObjectRef\":{\"kind\":\"Pod\",\"apiVersion\":\"v1\",\"name\":\"p\","
                + "\"uid\":\"9f1e\"}},\"status\":{\"token\":\"\",\"expirationTimestamp\":null}}");

        TokenRequestView token = new TokenRequestView(AdmissionReviews.read(body, new String[1]).object());

        assertThat(token.audiences()).containsExactly("vault");
        assertThat(token.expirationSeconds()).isEqualTo(3600);
        assertThat(token.boundObjectRef().kind()).isEqualTo("Pod");
        assertThat(token.boundObjectRef().name()).isEqualTo("p");
        assertThat(token.boundObjectRef().uid()).isEqualTo("9f1e");
    }

    @Test
    void nesting_deeperThanTheLimit_refusedEvenWhereNothingIsKept() {
        // review, request, object and spec are 4 levels; 61 lists make 65
        byte[] body = review("{\"kind\":\"Pod\",\"spec\":{\"affinity\":" + "[".repeat(61) + "]".repeat(61) + "}}");

        assertThatThrownBy(() -> AdmissionReviews.read(body, new String[1]))
                .isInstanceOf(InvalidReviewException.class)
                .hasMessageStartingWith("AdmissionReview: nested more than 64 levels deep at $.request.object.spec"
                        + ".affinity[0]")
                .hasMessageEndingWith("; no admission rule reads that deep");
    }

    @Test
    void nesting_atTheLimit_read() throws Exception {
        byte[] body = review("{\"kind\":\"Pod\",\"spec\":{\"affinity\":" + "[".repeat(60) + "]".repeat(60) + "}}");

        assertThat(AdmissionReviews.read(body, new String[1]).object().getAsJsonObject("spec").keySet()).isEmpty();
    }

    @Test
    void rootNotAnObject_skippedUnbuilt_andRefused() {
        byte[] body = nestedLists("$", MIB);
        byte[] list = new String(body, StandardCharsets.US_ASCII).substring(ReviewMemory.HEAD.length(),
                body.length - 2).getBytes(StandardCharsets.US_ASCII);

        assertThatThrownBy(() -> ReviewReader.read(list, ReviewReader.Charge.NONE))
                .hasMessage("AdmissionReview: must be a JSON object");
    }

    @Test
    void charge_claimsWhatIsKept_inSteps_allOfItByTheEnd() throws Exception {
        byte[] body = ReviewMemory.containers(1000);
        List<Long> claims = new ArrayList<>();

        ReviewReader.Read read = ReviewReader.read(body, bytes -> claims.add(bytes));

        assertThat(claims).hasSizeGreaterThan(1);
        assertThat(claims.subList(0, claims.size() - 1)).allSatisfy(claim -> assertThat(claim)
                .isGreaterThanOrEqualTo(ReviewReader.CHARGE_STEP));
        assertThat(claims.stream().mapToLong(Long::longValue).sum()).isEqualTo(read.retainedBytes());
    }

    @Test
    void charge_refused_endsTheReadAsOverload() {
        byte[] body = ReviewMemory.containers(1000);
        List<Long> claims = new ArrayList<>();

        assertThatThrownBy(() -> ReviewReader.read(body, bytes -> claims.add(bytes) && claims.size() < 2))
                .isInstanceOf(ReviewOverloadException.class)
                .hasMessageStartingWith("the webhook's memory budget for reviews is full; this review needs ");
        assertThat(claims).hasSize(2);
    }

    /** A review whose pod holds, at {@code $} in {@code object}, a list of empty lists making the body {@code size}. */
    static byte[] nestedLists(String object, int size) {
        String[] parts = object.split("\\$", -1);
        StringBuilder body = new StringBuilder(size).append(ReviewMemory.HEAD).append(parts[0]).append('[');
        int tail = (parts.length > 1 ? parts[1].length() : 0) + 5; // "[]]", the rest, "}}"
        while (body.length() + 3 + tail <= size) {
            body.append("[],");
        }
        body.append("[]]").append(parts.length > 1 ? parts[1] : "").append("}}");
        return body.toString().getBytes(StandardCharsets.US_ASCII);
    }

    static byte[] review(String object) {
        return (ReviewMemory.HEAD + object + "}}").getBytes(StandardCharsets.UTF_8);
    }
}
