package io.satoken.agent.projection;

import io.satoken.common.projection.FieldErrors;
import java.util.Objects;

/**
 * The pod a volume belongs to, as the kubelet names it when it publishes the volume (CSI pod info):
 * never what the pod itself wrote. Its tokens are requested for {@code serviceAccount} and bound to the
 * pod by name and uid.
 */
public record PodIdentity(String namespace, String name, String uid, String serviceAccount) {

    public PodIdentity {
        Objects.requireNonNull(namespace, "namespace");
        Objects.requireNonNull(name, "name");
        Objects.requireNonNull(uid, "uid");
        Objects.requireNonNull(serviceAccount, "serviceAccount");
    }

    /** {@code namespace/name}, for logs and messages. */
    @Override
    public String toString() {
        return namespace + "/" + name + " (uid " + FieldErrors.quote(uid) + ")";
    }
}
