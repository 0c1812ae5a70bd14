package io.satoken.controlplane.injection;

import io.kubernetes.client.openapi.ApiClient;
import io.kubernetes.client.openapi.ApiException;
import io.kubernetes.client.openapi.apis.CoreV1Api;
import io.kubernetes.client.openapi.models.CoreV1Event;
import io.kubernetes.client.openapi.models.V1DeleteOptions;
import io.kubernetes.client.openapi.models.V1EventSource;
import io.kubernetes.client.openapi.models.V1Eviction;
import io.kubernetes.client.openapi.models.V1ObjectMeta;
import io.kubernetes.client.openapi.models.V1ObjectReference;
import io.kubernetes.client.openapi.models.V1Pod;
import io.kubernetes.client.openapi.models.V1Preconditions;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.util.UUID;

/** {@link InjectionCheckSync.PodActions} through the API server: an Event, and an eviction. */
final class ApiPodActions implements InjectionCheckSync.PodActions {

    private final ApiClient client;
    private final CoreV1Api core;

    ApiPodActions(ApiClient client) {
        this.client = client;
        this.core = new CoreV1Api(client);
    }

    @Override
    public void warn(V1Pod pod, String reason, String message) throws ApiException {
        V1ObjectMeta meta = pod.getMetadata();
        OffsetDateTime now = OffsetDateTime.now(ZoneOffset.UTC);
        core.createNamespacedEvent(meta.getNamespace(), new CoreV1Event()
                .metadata(new V1ObjectMeta().namespace(meta.getNamespace())
                        .name(meta.getName() + "." + UUID.randomUUID().toString().substring(0, 8)))
                .involvedObject(new V1ObjectReference().kind("Pod").apiVersion("v1")
                        .namespace(meta.getNamespace()).name(meta.getName()).uid(meta.getUid()))
                .type("Warning").reason(reason).message(message).count(1)
                .firstTimestamp(now).lastTimestamp(now)
                .source(new V1EventSource().component("satoken-controlplane"))).execute();
    }

    /**
     * A policy/v1 Eviction, not a DELETE, so that PodDisruptionBudgets hold (the API server answers 429 when one
     * refuses), with the pod's uid as a precondition, so that a pod created again under the same name meanwhile is
     * not evicted. The answer is a Status, not an Eviction, and is not read.
     */
    @Override
    public void evict(V1Pod pod) throws ApiException {
        V1ObjectMeta meta = pod.getMetadata();
        V1Eviction eviction = new V1Eviction().apiVersion("policy/v1").kind("Eviction")
                .metadata(new V1ObjectMeta().name(meta.getName()).namespace(meta.getNamespace()))
                .deleteOptions(new V1DeleteOptions().preconditions(new V1Preconditions().uid(meta.getUid())));
        client.execute(core.createNamespacedPodEviction(meta.getName(), meta.getNamespace(), eviction).buildCall(null));
    }
}
