package io.satoken.controlplane.admission;

import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;
import com.google.gson.JsonObject;
import io.kubernetes.client.openapi.ApiClient;
import io.kubernetes.client.openapi.ApiException;
import io.kubernetes.client.openapi.apis.CoreV1Api;
import io.satoken.controlplane.admission.view.InvalidReviewException;
import io.satoken.controlplane.admission.view.Field;
import io.satoken.controlplane.kube.ApiErrors;
import java.time.Duration;
import java.util.Optional;

/**
 * Pods by namespace, name and uid, read with a live GET. Watching every pod in the cluster would cost the
 * control plane far more than the agents' token requests do.
 *
 * <p>Two reads, because the two pods of a token request are vouched for differently:
 * <ul>
 *   <li>{@link #requester}: the agent's own pod, remembered by uid once bound. Its facts never change for
 *       that uid, and the API server's token authenticator has already checked, for this very request,
 *       that the pod the agent's token is bound to still exists with that uid; a deleted agent pod's
 *       token no longer authenticates, so a remembered entry cannot outlive it in effect.</li>
 *   <li>{@link #target}: the pod the new token is to be bound to, always read live. A uid is never
 *       reused, but a remembered entry would still say "exists" after the pod is deleted, or deleted and
 *       created again under the same name on another node. The API server's own bound-object check
 *       (the pod's current uid must equal spec.boundObjectRef.uid) would refuse that token too, but this
 *       check does not lean on it: NT-3 itself compares with the live pod. It costs one GET per agent
 *       TokenRequest, as the API server's own check does.</li>
 * </ul>
 */
public final class PodFactsLookup {

    /** A pod as the API server serves it (not under review): what the token check reads of the requester. */
    private static final Field.Obj POD = Field.root();
    private static final Field.Obj METADATA = POD.object("metadata");
    private static final Field.Str UID = METADATA.string("uid");
    private static final Field.Obj SPEC = POD.object("spec");
    private static final Field.Str NODE_NAME = SPEC.string("nodeName");
    private static final Field.Str SERVICE_ACCOUNT_NAME = SPEC.string("serviceAccountName");

    /** A live read of one pod; empty when it does not exist. */
    @FunctionalInterface
    interface Live {
        Optional<PodFacts> get(String namespace, String name) throws ApiException;
    }

    private final Live live;
    private final Cache<String, PodFacts> requestersByUid = Caffeine.newBuilder()
            .maximumSize(10_000).expireAfterAccess(Duration.ofHours(1)).build();

    public PodFactsLookup(Live live) {
        this.live = live;
    }

    /** Reads pods with {@code client}, as JSON: a newer API server's pod fields must not break the read. */
    public static Live live(ApiClient client) {
        CoreV1Api core = new CoreV1Api(client);
        return (namespace, name) -> {
            JsonObject pod;
            try {
                pod = client.<JsonObject>execute(core.readNamespacedPod(name, namespace).buildCall(null),
                        JsonObject.class).getData();
            } catch (ApiException e) {
                if (ApiErrors.isNotFound(e)) {
                    return Optional.empty();
                }
                throw e;
            }
            try {
                JsonObject metadata = METADATA.read(pod, "pod");
                JsonObject spec = SPEC.read(pod, "pod");
                return Optional.of(new PodFacts(namespace, name, UID.readOrEmpty(metadata, "metadata"),
                        NODE_NAME.readOrEmpty(spec, "spec"), SERVICE_ACCOUNT_NAME.readOrEmpty(spec, "spec"),
                        CsiTokenRequests.of(spec)));
            } catch (InvalidReviewException e) {
                throw new ApiException("pod " + namespace + "/" + name + " could not be read: " + e.getMessage());
            }
        };
    }

    /** The requesting agent's pod {@code namespace/name} with {@code uid}, if it exists; remembered once bound. */
    Optional<PodFacts> requester(String namespace, String name, String uid) throws ApiException {
        PodFacts cached = requestersByUid.getIfPresent(uid);
        if (cached != null && cached.namespace().equals(namespace) && cached.name().equals(name)) {
            return Optional.of(cached);
        }
        Optional<PodFacts> found = target(namespace, name, uid);
        if (found.isPresent() && found.get().bound()) {
            requestersByUid.put(uid, found.get());
        }
        return found;
    }

    /** The pod {@code namespace/name} as it is now, if it exists and has {@code uid}; never from memory. */
    Optional<PodFacts> target(String namespace, String name, String uid) throws ApiException {
        return live.get(namespace, name).filter(pod -> pod.uid().equals(uid));
    }
}
