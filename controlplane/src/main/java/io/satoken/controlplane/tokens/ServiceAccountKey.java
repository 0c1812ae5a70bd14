package io.satoken.controlplane.tokens;

import io.kubernetes.client.openapi.models.V1ServiceAccount;
import java.util.Optional;

/** The tokens controller's queue key for a ServiceAccount event (TC-1): the UID tells a recreated account apart. */
record ServiceAccountKey(String namespace, String name, String uid) {

    /** The key, or empty when the object lacks a namespace, name or UID (TC-1: dropped, not retried). */
    static Optional<ServiceAccountKey> of(V1ServiceAccount sa) {
        var meta = sa.getMetadata();
        if (meta == null || empty(meta.getNamespace()) || empty(meta.getName()) || empty(meta.getUid())) {
            return Optional.empty();
        }
        return Optional.of(new ServiceAccountKey(meta.getNamespace(), meta.getName(), meta.getUid()));
    }

    static boolean empty(String s) {
        return s == null || s.isEmpty();
    }

    @Override
    public String toString() {
        return "serviceaccount " + namespace + "/" + name + " (uid " + uid + ")";
    }
}
