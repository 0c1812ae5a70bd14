package io.satoken.controlplane.injection;

import io.kubernetes.client.openapi.models.V1OwnerReference;
import java.util.Arrays;
import java.util.Optional;

/**
 * The controllers that create a pod again from their pod template once it is gone: the only owners whose pods the
 * check evicts. Matched on API group and kind, so that a custom resource that is also called {@code Job} is not one.
 */
enum RecreatingOwner {
    REPLICA_SET("apps", "ReplicaSet"),
    STATEFUL_SET("apps", "StatefulSet"),
    DAEMON_SET("apps", "DaemonSet"),
    JOB("batch", "Job");

    private final String group;
    private final String kind;

    RecreatingOwner(String group, String kind) {
        this.group = group;
        this.kind = kind;
    }

    /** The owner {@code ref} names, if it is one of these (any version of the group). */
    static Optional<RecreatingOwner> of(V1OwnerReference ref) {
        String apiVersion = ref.getApiVersion() == null ? "" : ref.getApiVersion();
        String refGroup = apiVersion.contains("/") ? apiVersion.substring(0, apiVersion.indexOf('/')) : "";
        return Arrays.stream(values()).filter(o -> o.group.equals(refGroup) && o.kind.equals(ref.getKind()))
                .findFirst();
    }

    /** The kind, as the Event and the log name it ("ReplicaSet"). */
    String kind() {
        return kind;
    }
}
