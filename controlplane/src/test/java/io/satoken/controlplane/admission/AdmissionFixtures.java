package io.satoken.controlplane.admission;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.flipkart.zjsonpatch.JsonPatch;
import com.google.gson.JsonArray;
import com.google.gson.JsonObject;
import com.google.gson.JsonParser;
import io.kubernetes.client.openapi.ApiException;
import io.kubernetes.client.openapi.models.V1LocalObjectReference;
import io.kubernetes.client.openapi.models.V1ObjectMeta;
import io.kubernetes.client.openapi.models.V1ObjectReference;
import io.kubernetes.client.openapi.models.V1ServiceAccount;
import io.satoken.controlplane.admission.view.InvalidReviewException;
import io.satoken.controlplane.webhook.AdmissionReviews;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicLong;

/** Builders for admission requests, pods as JSON and ServiceAccounts; and the patch applied by a real JSON-Patch library. */
public final class AdmissionFixtures {

    static final String NAMESPACE = "ns";
    private static final ObjectMapper MAPPER = new ObjectMapper();

    private AdmissionFixtures() {
    }

    /** JSON written with single quotes, for readable text in tests. */
    public static JsonObject json(String singleQuoted) {
        return JsonParser.parseString(singleQuoted.replace('\'', '"')).getAsJsonObject();
    }

    public static JsonNode jackson(String singleQuoted) {
        try {
            return MAPPER.readTree(singleQuoted.replace('\'', '"'));
        } catch (java.io.IOException e) {
            throw new IllegalArgumentException(e);
        }
    }

    /** A pod named {@code p} in {@value #NAMESPACE} with the given spec (single-quoted JSON). */
    public static JsonObject pod(String spec) {
        return json("{'apiVersion':'v1','kind':'Pod','metadata':{'name':'p','namespace':'ns'},'spec':" + spec + "}");
    }

    /** A pod with annotations. */
    static JsonObject pod(String annotations, String spec) {
        return json("{'apiVersion':'v1','kind':'Pod','metadata':{'name':'p','namespace':'ns','annotations':"
                + annotations + "},'spec':" + spec + "}");
    }

    static AdmissionRequest podCreate(JsonObject pod) {
        return request("CREATE", "pods", "", pod);
    }

    /** A request for a copy of {@code object}: the pod webhook changes the request's object as it patches. */
    static AdmissionRequest request(String operation, String resource, String subResource, JsonObject object) {
        object = object == null ? null : object.deepCopy();
        return new AdmissionRequest("uid-1", new AdmissionRequest.GroupVersionResource("", "v1", resource), subResource,
                operation, NAMESPACE, "p", new AdmissionRequest.UserInfo("alice", "", List.of(), Map.of()), object,
                false);
    }

    /**
     * {@code request} as the webhook reads it: written as an AdmissionReview and read back by
     * {@link AdmissionReviews#read}, which keeps only the declared fields ({@code view.Field}).
     */
    static AdmissionRequest throughReader(AdmissionRequest request) {
        JsonObject resource = new JsonObject();
        resource.addProperty("group", request.resource().group());
        resource.addProperty("version", request.resource().version());
        resource.addProperty("resource", request.resource().resource());
        JsonObject user = new JsonObject();
        user.addProperty("username", request.userInfo().username());
        user.addProperty("uid", request.userInfo().uid());
        JsonArray groups = new JsonArray();
        request.userInfo().groups().forEach(groups::add);
        user.add("groups", groups);
        JsonObject extra = new JsonObject();
        request.userInfo().extra().forEach((key, values) -> {
            JsonArray list = new JsonArray();
            values.forEach(list::add);
            extra.add(key, list);
        });
        user.add("extra", extra);
        JsonObject body = new JsonObject();
        body.addProperty("uid", request.uid());
        body.add("resource", resource);
        body.addProperty("subResource", request.subResource());
        body.addProperty("operation", request.operation());
        body.addProperty("namespace", request.namespace());
        body.addProperty("name", request.name());
        body.add("userInfo", user);
        if (request.object() != null) {
            body.add("object", request.object().deepCopy());
        }
        body.addProperty("dryRun", request.dryRun());
        JsonObject review = new JsonObject();
        review.addProperty("apiVersion", "admission.k8s.io/v1");
        review.addProperty("kind", "AdmissionReview");
        review.add("request", body);
        try {
            return AdmissionReviews.read(review.toString().getBytes(StandardCharsets.UTF_8), new String[1]);
        } catch (InvalidReviewException e) {
            throw new IllegalArgumentException(e);
        }
    }

    /**
     * {@code admission}, reviewing each request twice: as the webhook reads it ({@link #throughReader}), then as
     * given; the two verdicts must be the same, so a rule that reads a field the reader does not keep
     * fails its own tests. Returns the second.
     */
    static Admission checkedThroughReader(Admission admission) {
        return request -> {
            Verdict read = admission.review(throughReader(request));
            Verdict given = admission.review(request);
            assertThat(read).as("the verdict on the request as the webhook reads it (declared fields only)").isEqualTo(given);
            return given;
        };
    }

    /** The pod after the verdict's patch, applied by zjsonpatch (RFC 6902). */
    public static JsonNode patched(JsonObject pod, Verdict verdict) {
        try {
            JsonNode original = MAPPER.readTree(pod.toString());
            String patch = verdict instanceof Verdict.Patched patched ? patched.patch() : "[]";
            return JsonPatch.apply(MAPPER.readTree(patch), original);
        } catch (java.io.IOException e) {
            throw new IllegalArgumentException(e);
        }
    }

    /** {@code verdict} as the denial it must be. */
    static Verdict.Denied denied(Verdict verdict) {
        assertThat(verdict).isInstanceOf(Verdict.Denied.class);
        return (Verdict.Denied) verdict;
    }

    /** Gson to Jackson, for comparing with {@link #patched}. */
    static JsonObject gson(JsonNode node) {
        return JsonParser.parseString(node.toString()).getAsJsonObject();
    }

    public static V1ServiceAccount account(String name) {
        return new V1ServiceAccount().metadata(new V1ObjectMeta().namespace(NAMESPACE).name(name).uid(name + "-uid"));
    }

    static V1ServiceAccount withSecrets(V1ServiceAccount account, String... secrets) {
        for (String secret : secrets) {
            account.addSecretsItem(new V1ObjectReference().name(secret));
        }
        return account;
    }

    static V1ServiceAccount withPullSecrets(V1ServiceAccount account, String... secrets) {
        for (String secret : secrets) {
            account.addImagePullSecretsItem(new V1LocalObjectReference().name(secret));
        }
        return account;
    }

    static V1ServiceAccount enforcing(V1ServiceAccount account, String value) {
        account.getMetadata().putAnnotationsItem(MountableSecrets.ENFORCE_ANNOTATION, value);
        return account;
    }

    /** ServiceAccounts in an informer cache and behind a live GET, counting GETs and recording pauses. */
    public static final class Accounts {
        final Map<String, V1ServiceAccount> cached = new HashMap<>();
        final Map<String, V1ServiceAccount> live = new HashMap<>();
        final List<Duration> pauses = new ArrayList<>();
        /** The clock remembered misses expire by; advanced by hand. */
        final AtomicLong nanos = new AtomicLong();
        int liveGets;
        int failLiveWith;

        public Accounts cache(V1ServiceAccount account) {
            cached.put(account.getMetadata().getName(), account);
            return this;
        }

        Accounts onlyLive(V1ServiceAccount account) {
            live.put(account.getMetadata().getName(), account);
            return this;
        }

        ServiceAccountLookup lookup() {
            return new ServiceAccountLookup((namespace, name) -> Optional.ofNullable(cached.get(name)),
                    (namespace, name) -> {
                        liveGets++;
                        if (failLiveWith != 0) {
                            throw new ApiException(failLiveWith, Map.of(),
                                    "{\"kind\":\"Status\",\"message\":\"injected\"}");
                        }
                        V1ServiceAccount account = live.get(name);
                        if (account == null) {
                            throw new ApiException(404, Map.of(), "{\"kind\":\"Status\",\"reason\":\"NotFound\","
                                    + "\"message\":\"serviceaccounts \\\"" + name + "\\\" not found\"}");
                        }
                        return account;
                    }, pauses::add, () -> 42, nanos::get);
        }

        void advance(Duration duration) {
            nanos.addAndGet(duration.toNanos());
        }
    }
}
