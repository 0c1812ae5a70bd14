package io.satoken.controlplane.injection;

import io.kubernetes.client.openapi.ApiException;
import io.kubernetes.client.openapi.models.V1OwnerReference;
import io.kubernetes.client.openapi.models.V1Pod;
import io.satoken.common.kube.Failures;
import io.satoken.common.projection.ProjectionAnnotation;
import io.satoken.controlplane.kube.ApiErrors;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Decides whether the check may evict a pod that asks for tokens but has no token volume: only when its replacement
 * would come back through the webhook, asking for tokens. In order:
 * <ol>
 *   <li>Never in a namespace the pod webhook skips ({@link #SKIPPED_NAMESPACES}): the replacement would come back
 *       without the volume too, and be evicted again, without end.</li>
 *   <li>Only a pod whose controller is a {@link RecreatingOwner}: nothing creates a bare pod again.</li>
 *   <li>Only when that controller, read live, is the one the pod names (same uid) and its pod template has the
 *       annotation. Otherwise the annotation was put on the pod after it was created, by anyone who may patch pods,
 *       and the webhook, which acts on CREATE, was never asked: evicting such a pod would turn pods patch into pods
 *       delete. A controller that cannot be read (404, 403) gives no answer, so no eviction either.</li>
 * </ol>
 */
final class ReplacementCheck {

    private static final Logger log = LoggerFactory.getLogger(ReplacementCheck.class);

    /**
     * The namespaces the pod webhook {@code pods.serviceaccount.satoken.io} skips, each with why. They are its
     * namespaceSelector's {@code NotIn} values in {@code controlplane/deploy/webhooks/webhook-configurations.yaml}
     * ({@code satoken-webhook} is the webhook's own namespace in {@code controlplane/deploy/}); SkippedNamespacesTest
     * reads them there, so the two cannot drift apart.
     */
    static final Map<String, String> SKIPPED_NAMESPACES = Map.of(
            "kube-system", "kube-system's pods get the volume only when a webhook replica is ready as they are created"
                    + " (its registration there fails open): recreate the pod yourself once the webhook runs",
            "satoken-webhook", "the pod webhook never mutates the pods of its own namespace, satoken-webhook (so that"
                    + " its own pods can start while no replica is ready)");

    private final OwnerTemplates owners;

    ReplacementCheck(OwnerTemplates owners) {
        this.owners = owners;
    }

    /**
     * The verdict on {@code pod}, which asks for tokens but has no token volume.
     *
     * @throws ApiException the controller's read failed otherwise than 403 or 404: worth trying again
     */
    Verdict check(V1Pod pod) throws ApiException {
        String namespace = pod.getMetadata().getNamespace();
        Optional<V1OwnerReference> controller = controller(pod);
        String owner = controller.map(o -> o.getKind() + " " + o.getName()).orElse("no controller");
        String skipped = SKIPPED_NAMESPACES.get(namespace);
        if (skipped != null) {                                                                      // 1
            return Verdict.skippedNamespace(owner, skipped);
        }
        Optional<RecreatingOwner> kind = controller.flatMap(RecreatingOwner::of);
        if (kind.isEmpty()) {                                                                       // 2
            return Verdict.notRecreated(owner);
        }
        OwnerTemplates.Template template;                                                           // 3
        try {
            template = owners.read(kind.get(), namespace, controller.get().getName());
        } catch (ApiException e) {
            if (e.getCode() != 403 && !ApiErrors.isNotFound(e)) {
                throw e;
            }
            log.warn("pod {}/{}: reading its {}: {}", namespace, pod.getMetadata().getName(), owner,
                    Failures.said(e));
            return Verdict.ownerUnreadable(owner, "HTTP " + e.getCode());
        }
        if (!Objects.equals(template.uid(), controller.get().getUid())) {
            return Verdict.ownerUnreadable(owner, "the " + kind.get().kind() + " of that name is another one, uid "
                    + template.uid());
        }
        return template.annotations().containsKey(ProjectionAnnotation.NAME) ? Verdict.missed(owner)
                : Verdict.annotatedAfterCreation(owner);
    }

    static Optional<V1OwnerReference> controller(V1Pod pod) {
        List<V1OwnerReference> owners = Objects.requireNonNullElse(pod.getMetadata().getOwnerReferences(), List.of());
        return owners.stream().filter(o -> Boolean.TRUE.equals(o.getController())).findFirst();
    }
}
