package io.satoken.controlplane.injection;

import io.kubernetes.client.informer.SharedIndexInformer;
import io.kubernetes.client.informer.cache.Lister;
import io.kubernetes.client.openapi.ApiClient;
import io.kubernetes.client.openapi.models.V1Pod;
import io.micrometer.core.instrument.Gauge;
import io.satoken.controlplane.controller.ControllerLoop;
import io.satoken.controlplane.controller.ControllerMetrics;
import io.satoken.controlplane.controller.EventHandlers;
import io.satoken.controlplane.kube.Informers;
import io.satoken.controlplane.controller.LoopController;
import java.time.Duration;
import java.time.InstantSource;

/**
 * The injection check ({@code injection-check}, off unless named): finds pods that ask for satoken tokens but were
 * never given the webhook's volume, warns on each and counts them ({@code satoken_pods_missing_injection}); with
 * {@code --injection-check-delete-pods}, evicts those whose ReplicaSet, StatefulSet, DaemonSet or Job asks for tokens
 * in its pod template ({@link ReplacementCheck}), so that they come back mutated: in each namespace at most
 * {@value #EVICTION_BURST} at once and then one every {@link #EVICTION_INTERVAL}.
 * Every pod add and update queues the pod, so a pod is seen as soon as the cache has it; the cache keeps of each pod
 * only the fields the check reads ({@link PodFields}).
 */
public final class InjectionCheckController extends LoopController {

    public static final String NAME = "injection-check";
    /** The volume the webhook adds to an annotated pod. */
    public static final String VOLUME_NAME = InjectionCheckSync.VOLUME_NAME;
    static final Duration EVICTION_INTERVAL = Duration.ofSeconds(2);
    static final int EVICTION_BURST = 5;

    public InjectionCheckController(Informers informers, ApiClient client, boolean evictPods, int workers,
            ControllerMetrics metrics) {
        super(NAME);
        // the check is the pod informer's only user (Informers.pods), so the cache may hold what the check reads only
        SharedIndexInformer<V1Pod> pods = informers.pods(pod -> (V1Pod) PodFields.keep(pod));
        pods.setTransform(PodFields::keep);
        InjectionCheckSync sync = new InjectionCheckSync(new Lister<>(pods.getIndexer()),
                new ReplacementCheck(new ApiOwnerTemplates(client)), new ApiPodActions(client), evictPods,
                new EvictionBudget(InstantSource.system(), EVICTION_INTERVAL, EVICTION_BURST));
        Gauge.builder("satoken_pods_missing_injection", sync, InjectionCheckSync::missing)
                .description("Pods with the satoken.io/projections annotation but without the webhook's token volume")
                .register(metrics.registry());
        ControllerLoop<String> loop = addLoop(NAME, sync, workers, ControllerLoop.UNLIMITED_RETRIES, metrics);
        pods.addEventHandler(EventHandlers.of(
                pod -> loop.enqueue(pod.getMetadata().getNamespace() + "/" + pod.getMetadata().getName()),
                pod -> loop.enqueue(pod.getMetadata().getNamespace() + "/" + pod.getMetadata().getName())));
    }
}
