package io.satoken.agent.projection;

import io.kubernetes.client.openapi.models.V1Container;
import io.kubernetes.client.openapi.models.V1EphemeralContainer;
import io.kubernetes.client.openapi.models.V1Pod;
import io.kubernetes.client.openapi.models.V1PodSecurityContext;
import io.kubernetes.client.openapi.models.V1PodSpec;
import io.kubernetes.client.openapi.models.V1SecurityContext;
import io.satoken.common.projection.ProjectionSpec;
import java.util.ArrayList;
import java.util.List;

/**
 * The owner and group a pod's securityContext gives its token files, kubelet's fsUser (PV-18) and fsGroup
 * (PV-17), each with the field of the pod it came from, so that an id the node refuses can be named.
 *
 * @param fsUser the runAsUser every container runs as, or null
 * @param fsGroup {@code spec.securityContext.fsGroup}, or null
 */
public record PodOwners(Id fsUser, Id fsGroup) {

    /** An id and where the pod gives it, e.g. 1000 from {@code spec.containers[0].securityContext.runAsUser}. */
    public record Id(int value, String field) {
    }

    private static final String POD_RUN_AS_USER = "spec.securityContext.runAsUser";
    private static final String FS_GROUP = "spec.securityContext.fsGroup";

    /**
     * @param pod the pod as read from the API, for its securityContext only
     * @throws IllegalArgumentException naming the field when an id the files would get is not 0..2^31-1
     *     (the API server's validation prevents it)
     */
    public static PodOwners of(V1Pod pod) {
        return new PodOwners(fsUser(pod), fsGroup(pod));
    }

    /**
     * The field that gives the files' group ({@code group} true) or owner {@code id}: a projections entry's own
     * {@code uid} or {@code gid}, which wins over the pod's (named {@code <specsField>[i].uid}), else the pod's.
     *
     * @return the field, or null when neither gives that id
     */
    public String fieldOf(boolean group, int id, List<ProjectionSpec> specs, String specsField) {
        for (int i = 0; i < specs.size(); i++) {
            Integer own = group ? specs.get(i).gid() : specs.get(i).uid();
            if (own != null && own == id) {
                return specsField + "[" + i + "]." + (group ? "gid" : "uid");
            }
        }
        Id pods = group ? fsGroup : fsUser;
        return pods != null && pods.value() == id ? pods.field() : null;
    }

    /**
     * PV-18: the runAsUser every container runs as (a container's own over the pod's), or null when the pod has
     * no containers, a container has neither, or two differ. Its field is the first container's.
     */
    private static Id fsUser(V1Pod pod) {
        V1PodSpec spec = pod.getSpec();
        if (spec == null) {
            return null;
        }
        Long podUser = spec.getSecurityContext() == null ? null : spec.getSecurityContext().getRunAsUser();
        List<String> paths = new ArrayList<>();
        List<V1SecurityContext> contexts = new ArrayList<>();
        List<V1Container> init = nonNull(spec.getInitContainers());
        for (int i = 0; i < init.size(); i++) {
            paths.add("spec.initContainers[" + i + "]");
            contexts.add(init.get(i).getSecurityContext());
        }
        List<V1Container> regular = nonNull(spec.getContainers());
        for (int i = 0; i < regular.size(); i++) {
            paths.add("spec.containers[" + i + "]");
            contexts.add(regular.get(i).getSecurityContext());
        }
        List<V1EphemeralContainer> ephemeral = nonNull(spec.getEphemeralContainers());
        for (int i = 0; i < ephemeral.size(); i++) {
            paths.add("spec.ephemeralContainers[" + i + "]");
            contexts.add(ephemeral.get(i).getSecurityContext());
        }
        Long shared = null;
        String field = null;
        for (int i = 0; i < contexts.size(); i++) {
            V1SecurityContext context = contexts.get(i);
            boolean own = context != null && context.getRunAsUser() != null;
            Long user = own ? context.getRunAsUser() : podUser;
            if (user == null || (shared != null && !shared.equals(user))) {
                return null;
            }
            if (shared == null) {
                shared = user;
                field = own ? paths.get(i) + ".securityContext.runAsUser" : POD_RUN_AS_USER;
            }
        }
        return shared == null ? null : new Id(checked(shared, field), field);
    }

    /** PV-17: {@code spec.securityContext.fsGroup}, or null. */
    private static Id fsGroup(V1Pod pod) {
        V1PodSecurityContext context = pod.getSpec() == null ? null : pod.getSpec().getSecurityContext();
        return context == null || context.getFsGroup() == null ? null
                : new Id(checked(context.getFsGroup(), FS_GROUP), FS_GROUP);
    }

    private static int checked(long id, String field) {
        if (id < 0 || id > Integer.MAX_VALUE) {
            throw new IllegalArgumentException(field + ": must be between 0 and " + Integer.MAX_VALUE + ", got " + id);
        }
        return (int) id;
    }

    private static <T> List<T> nonNull(List<T> list) {
        return list == null ? List.of() : list;
    }
}
