package io.satoken.controlplane.injection;

import io.kubernetes.client.informer.cache.Lister;
import io.kubernetes.client.openapi.ApiClient;
import io.kubernetes.client.openapi.apis.CoreV1Api;
import io.kubernetes.client.openapi.models.CoreV1Event;
import io.kubernetes.client.openapi.models.V1EventSource;
import io.kubernetes.client.openapi.models.V1ObjectMeta;
import io.kubernetes.client.openapi.models.V1ObjectReference;
import io.kubernetes.client.openapi.models.V1Pod;
import io.micrometer.core.instrument.Gauge;
import io.satoken.controlplane.controller.ControllerLoop;
import io.satoken.controlplane.controller.ControllerMetrics;
import io.satoken.controlplane.controller.EventHandlers;
import io.satoken.controlplane.kube.Informers;
import io.satoken.controlplane.controller.LoopController;
import java.time.Duration;
import java.time.InstantSource;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.util.UUID;

/**
 * The injection check ({@code injection-check}, off unless named): finds pods that ask for satoken tokens but were
 * never given the webhook's volume, warns on each and counts them ({@code satoken_pods_missing_injection}); with
 * {@code --injection-check-delete-pods}, deletes those a ReplicaSet, StatefulSet, DaemonSet or Job owns, at most
 * {@value #DELETE_BURST} at once and then one every {@link #DELETE_INTERVAL}, so that they come back mutated.
 * Every pod add and update queues the pod, so a pod is seen as soon as the cache has it.
 */
public final class InjectionCheckController extends LoopController {

    public static final String NAME = "injection-check";
    /** The volume the webhook adds to an annotated pod. */
    public static final String VOLUME_NAME = InjectionCheckSync.VOLUME_NAME;
    static final Duration DELETE_INTERVAL = Duration.ofSeconds(2);
    static final int DELETE_BURST = 5;

    public InjectionCheckController(Informers informers, ApiClient client, boolean deletePods, int workers,
            ControllerMetrics metrics) {
        super(NAME);
        CoreV1Api core = new CoreV1Api(client);
        InstantSource clock = InstantSource.system();
        InjectionCheckSync sync = new InjectionCheckSync(new Lister<>(informers.pods().getIndexer()),
                new InjectionCheckSync.PodActions() {
                    @Override
                    public void warn(V1Pod pod, String reason, String message) throws io.kubernetes.client.openapi.ApiException {
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

                    @Override
                    public void delete(V1Pod pod) throws io.kubernetes.client.openapi.ApiException {
                        // the uid as a precondition: a pod recreated under the same name meanwhile is not deleted
                        core.deleteNamespacedPod(pod.getMetadata().getName(), pod.getMetadata().getNamespace())
                                .body(new io.kubernetes.client.openapi.models.V1DeleteOptions().preconditions(
                                        new io.kubernetes.client.openapi.models.V1Preconditions()
                                                .uid(pod.getMetadata().getUid()))).execute();
                    }
                }, deletePods, new DeleteBudget(clock, DELETE_INTERVAL, DELETE_BURST), clock);
        Gauge.builder("satoken_pods_missing_injection", sync, InjectionCheckSync::missing)
                .description("Pods with the satoken.io/projections annotation but without the webhook's token volume")
                .register(metrics.registry());
        ControllerLoop<String> loop = addLoop(NAME, sync, workers, ControllerLoop.UNLIMITED_RETRIES, metrics);
        informers.pods().addEventHandler(EventHandlers.of(
                pod -> loop.enqueue(pod.getMetadata().getNamespace() + "/" + pod.getMetadata().getName()),
                pod -> loop.enqueue(pod.getMetadata().getNamespace() + "/" + pod.getMetadata().getName())));
    }
}
