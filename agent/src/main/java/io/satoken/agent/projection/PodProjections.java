package io.satoken.agent.projection;

import io.kubernetes.client.openapi.models.V1Pod;
import io.satoken.agent.token.BoundObjectRef;
import io.satoken.agent.token.TokenKey;
import io.satoken.common.projection.ProjectionAnnotation;
import io.satoken.common.projection.ProjectionSpec;
import java.util.ArrayList;
import java.util.List;

/**
 * Turns the files a pod asks for into token files, each token bound to the pod and each file's mode and
 * owner chosen as kubelet chooses them for a projected token (PV-14, PV-16..PV-18).
 *
 * <p>A file's mode and owner:
 * <ol>
 *   <li>mode = the entry's {@code mode}, or 0644 when it gives none (PV-1);</li>
 *   <li>fsUser = the runAsUser every container of the pod (init, regular and ephemeral) runs as, a
 *       container's own value over the pod's; none if any container has neither, or two differ
 *       (PV-18); fsGroup = {@code spec.securityContext.fsGroup} (PV-17); both read by {@link PodOwners};</li>
 *   <li>owner = the entry's {@code uid}, or fsUser; group = the entry's {@code gid}, or fsGroup;</li>
 *   <li>if owner or group is set, mode = 0600, whatever step 1 gave (PV-16);</li>
 *   <li>if group is set, mode |= 0040, giving 0640 (PV-17: group read on a read-only volume).</li>
 * </ol>
 * An unset owner or group leaves the file's as the agent creates it.
 */
public final class PodProjections {

    /** PV-1: the mode of a file whose entry gives none. */
    public static final int DEFAULT_MODE = 0644;
    /** PV-16: the mode when the file gets an owner or a group. */
    public static final int OWNED_MODE = 0600;
    /** PV-17: group read, added when the file gets a group. */
    public static final int GROUP_READ = 0040;

    private PodProjections() {
    }

    /**
     * The token files of one of the pod's volumes.
     *
     * @param pod who asks: namespace, name, uid and ServiceAccount as the kubelet vouches for them
     * @param securityContext the pod as read from the API, for its securityContext only (PV-16..PV-18)
     * @param specs the volume's files, as {@link ProjectionAnnotation#parse} or the volume's attributes give them
     * @throws IllegalArgumentException naming the field when the pod has ids out of range (the API server's
     *     validation prevents it); see {@link PodOwners#of}
     */
    public static List<Projection> projections(PodIdentity pod, V1Pod securityContext, List<ProjectionSpec> specs) {
        return projections(pod, PodOwners.of(securityContext), specs);
    }

    /** As {@link #projections(PodIdentity, V1Pod, List)}, with the pod's owners already read. */
    public static List<Projection> projections(PodIdentity pod, PodOwners owners, List<ProjectionSpec> specs) {
        Integer fsUser = owners.fsUser() == null ? null : owners.fsUser().value();
        Integer fsGroup = owners.fsGroup() == null ? null : owners.fsGroup().value();
        BoundObjectRef boundTo = BoundObjectRef.pod(pod.name(), pod.uid());
        List<Projection> projections = new ArrayList<>(specs.size());
        for (ProjectionSpec spec : specs) {
            TokenKey key = TokenKey.of(pod.namespace(), pod.serviceAccount(), spec.ask(), boundTo); // PV-14
            // the numbered steps of the class comment
            int mode = spec.mode() != null ? spec.mode() : DEFAULT_MODE;            // 1
            Integer owner = spec.uid() != null ? spec.uid() : fsUser;               // 2, 3
            Integer group = spec.gid() != null ? spec.gid() : fsGroup;
            if (owner != null || group != null) {
                mode = OWNED_MODE;                                                  // 4
            }
            if (group != null) {
                mode |= GROUP_READ;                                                 // 5
            }
            projections.add(new Projection(key, spec.path(), mode, owner, group));
        }
        return List.copyOf(projections);
    }
}
