package io.satoken.controlplane.injection;

import static io.satoken.controlplane.controller.Reconciler.Result.DONE;
import static io.satoken.controlplane.controller.Reconciler.Result.RETRY;

import io.kubernetes.client.informer.cache.Lister;
import io.kubernetes.client.openapi.ApiException;
import io.kubernetes.client.openapi.models.V1OwnerReference;
import io.kubernetes.client.openapi.models.V1Pod;
import io.kubernetes.client.openapi.models.V1Volume;
import io.satoken.common.projection.CsiVolumeAttributes;
import io.satoken.common.projection.ProjectionAnnotation;
import io.satoken.controlplane.kube.ApiErrors;
import io.satoken.controlplane.controller.Reconciler;
import java.time.Instant;
import java.time.InstantSource;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The injection check's sync, for one pod ({@code namespace/name}):
 * <ol>
 *   <li>A pod that asks for satoken tokens (the {@value ProjectionAnnotation#NAME} annotation) but has no volume
 *       {@value #VOLUME_NAME} of driver {@value CsiVolumeAttributes#DRIVER} was not mutated by the webhook: created
 *       while it was down or not registered, or in a namespace it skips. Terminal, deleting and mirror pods are
 *       left alone.</li>
 *   <li>Such a pod is counted ({@link #missing()}) and gets one Warning Event {@value #REASON} per pod.</li>
 *   <li>With deletion on, a pod whose controller is a ReplicaSet, StatefulSet, DaemonSet or Job is deleted, so that
 *       its controller creates it again, through the webhook; a bare pod, or one of another controller, never is.
 *       Deletions share one budget ({@link DeleteBudget}); a pod over it is tried again later.</li>
 * </ol>
 */
final class InjectionCheckSync implements Reconciler<String> {

    private static final Logger log = LoggerFactory.getLogger(InjectionCheckSync.class);

    /** The webhook's volume (the admission package's AgentTokenInjection adds it under this name). */
    static final String VOLUME_NAME = "satoken-agent-tokens";
    static final String REASON = "TokenVolumeMissing";
    static final String MIRROR_POD_ANNOTATION = "kubernetes.io/config.mirror";
    static final Set<String> RECREATING_OWNERS = Set.of("ReplicaSet", "StatefulSet", "DaemonSet", "Job");

    /** What the check does to a pod through the API server. */
    interface PodActions {
        void warn(V1Pod pod, String reason, String message) throws ApiException;

        void delete(V1Pod pod) throws ApiException;
    }

    private final Lister<V1Pod> pods;
    private final PodActions actions;
    private final boolean deletePods;
    private final DeleteBudget budget;
    private final InstantSource clock;
    /** The pods found missing the volume, by key, with their uid; read by the gauge. */
    private final Map<String, String> missing = new ConcurrentHashMap<>();
    /** The uids warned about, so that a pod gets one Event however often it is synced. */
    private final Set<String> warned = ConcurrentHashMap.newKeySet();
    private volatile Instant lastFound;

    InjectionCheckSync(Lister<V1Pod> pods, PodActions actions, boolean deletePods, DeleteBudget budget,
            InstantSource clock) {
        this.pods = pods;
        this.actions = actions;
        this.deletePods = deletePods;
        this.budget = budget;
        this.clock = clock;
    }

    /** Pods now known to ask for tokens without the webhook's volume. */
    int missing() {
        return missing.size();
    }

    @Override
    public Result reconcile(String key) {
        int slash = key.indexOf('/');
        V1Pod pod = pods.namespace(key.substring(0, slash)).get(key.substring(slash + 1));
        if (pod == null || !lacksVolume(pod)) {                                                     // 1
            String uid = missing.remove(key);
            if (uid != null) {
                warned.remove(uid);
            }
            return DONE;
        }
        String uid = pod.getMetadata().getUid();
        missing.put(key, uid);
        if (warned.add(uid)) {                                                                      // 2
            lastFound = clock.instant();
            String owner = owner(pod).map(o -> o.getKind() + " " + o.getName()).orElse("no controller");
            String message = "the pod asks for satoken tokens (annotation " + ProjectionAnnotation.NAME
                    + ") but has no volume " + VOLUME_NAME + ": the webhook did not mutate it (it was down, not"
                    + " registered, or skips this namespace). "
                    + (deletePods && recreates(pod) ? "Deleting it so that its " + owner + " creates it again."
                            : "Delete it once the webhook runs" + (recreates(pod) ? "" : " (" + owner
                                    + ": it is not deleted for you)") + ".");
            try {
                actions.warn(pod, REASON, message);
            } catch (ApiException e) {
                log.warn("Event on pod {}: {}", key, ApiErrors.describe(e));
            }
            log.warn("pod {} asks for satoken tokens but has no {} volume ({})", key, VOLUME_NAME, owner);
        }
        if (!deletePods || !recreates(pod)) {                                                       // 3
            return DONE;
        }
        if (!budget.tryTake()) {
            return RETRY;
        }
        try {
            actions.delete(pod);
            log.info("deleted pod {} (uid {}) so that its controller creates it again through the webhook", key, uid);
            return DONE;
        } catch (ApiException e) {
            if (ApiErrors.isNotFound(e)) {
                return DONE;
            }
            log.warn("deleting pod {}: {}", key, ApiErrors.describe(e));
            return RETRY;
        }
    }

    /** When the last pod was first found missing the volume, or null. */
    Instant lastFound() {
        return lastFound;
    }

    static boolean lacksVolume(V1Pod pod) {
        if (pod.getMetadata() == null || pod.getMetadata().getDeletionTimestamp() != null) {
            return false;
        }
        Map<String, String> annotations = Objects.requireNonNullElse(pod.getMetadata().getAnnotations(), Map.of());
        if (!annotations.containsKey(ProjectionAnnotation.NAME) || annotations.containsKey(MIRROR_POD_ANNOTATION)) {
            return false;
        }
        String phase = pod.getStatus() == null ? null : pod.getStatus().getPhase();
        if ("Succeeded".equals(phase) || "Failed".equals(phase)) {
            return false;
        }
        List<V1Volume> volumes = pod.getSpec() == null ? List.of()
                : Objects.requireNonNullElse(pod.getSpec().getVolumes(), List.of());
        return volumes.stream().noneMatch(v -> VOLUME_NAME.equals(v.getName()) && v.getCsi() != null
                && CsiVolumeAttributes.DRIVER.equals(v.getCsi().getDriver()));
    }

    static boolean recreates(V1Pod pod) {
        return owner(pod).filter(o -> RECREATING_OWNERS.contains(o.getKind())).isPresent();
    }

    private static Optional<V1OwnerReference> owner(V1Pod pod) {
        List<V1OwnerReference> owners = Objects.requireNonNullElse(pod.getMetadata().getOwnerReferences(), List.of());
        return owners.stream().filter(o -> Boolean.TRUE.equals(o.getController())).findFirst();
    }
}
