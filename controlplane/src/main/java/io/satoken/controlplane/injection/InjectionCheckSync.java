package io.satoken.controlplane.injection;

import static io.satoken.controlplane.controller.Reconciler.Result.DONE;
import static io.satoken.controlplane.controller.Reconciler.Result.RETRY;

import io.kubernetes.client.informer.cache.Lister;
import io.kubernetes.client.openapi.ApiException;
import io.kubernetes.client.openapi.models.V1Pod;
import io.kubernetes.client.openapi.models.V1Volume;
import io.satoken.common.kube.Failures;
import io.satoken.common.projection.CsiVolumeAttributes;
import io.satoken.common.projection.ProjectionAnnotation;
import io.satoken.controlplane.kube.ApiErrors;
import io.satoken.controlplane.controller.Reconciler;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The injection check's sync, for one pod ({@code namespace/name}):
 * <ol>
 *   <li>A pod that asks for satoken tokens (the {@value ProjectionAnnotation#NAME} annotation) but has no volume
 *       {@value #VOLUME_NAME} of driver {@value CsiVolumeAttributes#DRIVER} was not mutated by the webhook. Terminal,
 *       deleting and mirror pods are left alone.</li>
 *   <li>Such a pod is counted ({@link #missing()}).</li>
 *   <li>Its {@link Verdict} says whether evicting it would bring it back mutated ({@link ReplacementCheck}: its
 *       controller's pod template asks for tokens, outside the namespaces the webhook skips). With eviction off it is
 *       needed only for the Event, so it is worked out only until the Event is sent.</li>
 *   <li>The pod gets one Warning Event {@value #REASON}, saying what the verdict found.</li>
 *   <li>With eviction on, a pod the verdict allows is evicted, so that its controller creates it again through the
 *       webhook. Evictions share a budget per namespace ({@link EvictionBudget}); a pod over it, or one a
 *       PodDisruptionBudget protects for now (429), is tried again later.</li>
 * </ol>
 */
final class InjectionCheckSync implements Reconciler<String> {

    private static final Logger log = LoggerFactory.getLogger(InjectionCheckSync.class);

    /** The webhook's volume (the admission package's AgentTokenInjection adds it under this name). */
    static final String VOLUME_NAME = "satoken-agent-tokens";
    static final String REASON = "TokenVolumeMissing";
    static final String MIRROR_POD_ANNOTATION = "kubernetes.io/config.mirror";

    /** What the check does to a pod through the API server. */
    interface PodActions {
        void warn(V1Pod pod, String reason, String message) throws ApiException;

        void evict(V1Pod pod) throws ApiException;
    }

    private final Lister<V1Pod> pods;
    private final ReplacementCheck replacements;
    private final PodActions actions;
    private final boolean evictPods;
    private final EvictionBudget budget;
    /** The pods found missing the volume, by key, with their uid; read by the gauge. */
    private final Map<String, String> missing = new ConcurrentHashMap<>();
    /** The uids warned about, so that a pod gets one Event however often it is synced. */
    private final Set<String> warned = ConcurrentHashMap.newKeySet();

    InjectionCheckSync(Lister<V1Pod> pods, ReplacementCheck replacements, PodActions actions, boolean evictPods,
            EvictionBudget budget) {
        this.pods = pods;
        this.replacements = replacements;
        this.actions = actions;
        this.evictPods = evictPods;
        this.budget = budget;
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
        missing.put(key, uid);                                                                      // 2
        if (!evictPods && warned.contains(uid)) {
            return DONE;
        }
        Verdict verdict;                                                                            // 3
        try {
            verdict = replacements.check(pod);
        } catch (ApiException e) {
            log.warn("pod {}: reading its controller: {}", key, Failures.said(e));
            return RETRY;
        }
        if (warned.add(uid)) {                                                                      // 4
            String message = "the pod asks for satoken tokens (annotation " + ProjectionAnnotation.NAME
                    + ") but has no volume " + VOLUME_NAME + verdict.explanation(evictPods);
            try {
                actions.warn(pod, REASON, message);
            } catch (ApiException e) {
                log.warn("Event on pod {}: {}", key, Failures.said(e));
            }
            log.warn("pod {} asks for satoken tokens but has no {} volume ({}; {})", key, VOLUME_NAME,
                    verdict.owner(), verdict.kind().name().toLowerCase(Locale.ROOT).replace('_', ' '));
        }
        if (!evictPods || !verdict.evicts()) {                                                      // 5
            return DONE;
        }
        if (!budget.tryTake(pod.getMetadata().getNamespace())) {
            return RETRY;
        }
        try {
            actions.evict(pod);
            log.info("evicted pod {} (uid {}) so that its {} creates it again through the webhook", key, uid,
                    verdict.owner());
            return DONE;
        } catch (ApiException e) {
            if (ApiErrors.isNotFound(e)) {
                return DONE;
            }
            if (e.getCode() == 429) {
                log.info("evicting pod {}: refused for now, trying again later: {}", key, Failures.said(e));
            } else {
                log.warn("evicting pod {}: {}", key, Failures.said(e));
            }
            return RETRY;
        }
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
}
