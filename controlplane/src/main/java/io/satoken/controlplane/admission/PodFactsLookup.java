package io.satoken.controlplane.admission;

import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;
import com.google.gson.JsonObject;
import io.kubernetes.client.openapi.ApiClient;
import io.kubernetes.client.openapi.ApiException;
import io.kubernetes.client.openapi.apis.CoreV1Api;
import io.satoken.controlplane.controller.ApiErrors;
import java.time.Duration;
import java.util.Optional;

/**
 * Pods by namespace and name: a live GET, remembered by uid once the pod is bound to a node. Watching
 * every pod in the cluster would cost the control plane far more than the agents' token requests do.
 */
final class PodFactsLookup {

    /** A live read of one pod; empty when it does not exist. */
    @FunctionalInterface
    interface Live {
        Optional<PodFacts> get(String namespace, String name) throws ApiException;
    }

    private final Live live;
    private final Cache<String, PodFacts> byUid = Caffeine.newBuilder()
            .maximumSize(100_000).expireAfterAccess(Duration.ofHours(1)).build();

    PodFactsLookup(Live live) {
        this.live = live;
    }

    /** Reads pods with {@code client}, as JSON: a newer API server's pod fields must not break the read. */
    static Live live(ApiClient client) {
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
                JsonObject metadata = Json.object(pod, "metadata", "pod");
                JsonObject spec = Json.object(pod, "spec", "pod");
                return Optional.of(new PodFacts(namespace, name, Json.stringOrEmpty(metadata, "uid", "metadata"),
                        Json.stringOrEmpty(spec, "nodeName", "spec"),
                        Json.stringOrEmpty(spec, "serviceAccountName", "spec")));
            } catch (InvalidReviewException e) {
                throw new ApiException("pod " + namespace + "/" + name + " could not be read: " + e.getMessage());
            }
        };
    }

    /**
     * The pod {@code namespace/name}, if it exists and (when {@code uid} is given) has that uid.
     */
    Optional<PodFacts> get(String namespace, String name, String uid) throws ApiException {
        if (uid != null && !uid.isEmpty()) {
            PodFacts cached = byUid.getIfPresent(uid);
            if (cached != null && cached.namespace().equals(namespace) && cached.name().equals(name)) {
                return Optional.of(cached);
            }
        }
        Optional<PodFacts> found = live.get(namespace, name);
        if (found.isEmpty() || (uid != null && !uid.isEmpty() && !uid.equals(found.get().uid()))) {
            return Optional.empty();
        }
        if (found.get().bound()) {
            byUid.put(found.get().uid(), found.get());
        }
        return found;
    }
}
