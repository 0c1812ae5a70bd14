package io.satoken.controlplane.tokens;

import io.kubernetes.client.openapi.models.V1Secret;
import java.util.Map;
import java.util.Optional;

/**
 * The tokens controller's queue key for a token Secret event (TC-1): the Secret's identity plus the
 * ServiceAccount its annotations name, kept so a deleted Secret can still be unlinked from its account.
 */
record SecretKey(String namespace, String name, String uid, String serviceAccountName, String serviceAccountUid) {

    /** Annotation naming the ServiceAccount a token Secret belongs to. */
    static final String SA_NAME_ANNOTATION = "kubernetes.io/service-account.name";
    /** Annotation carrying that ServiceAccount's UID; may be empty. */
    static final String SA_UID_ANNOTATION = "kubernetes.io/service-account.uid";

    /** The key, or empty when namespace, name, UID or the ServiceAccount name is missing (TC-1). */
    static Optional<SecretKey> of(V1Secret secret) {
        var meta = secret.getMetadata();
        if (meta == null) {
            return Optional.empty();
        }
        Map<String, String> annotations = meta.getAnnotations() == null ? Map.of() : meta.getAnnotations();
        String saName = annotations.getOrDefault(SA_NAME_ANNOTATION, "");
        if (ServiceAccountKey.empty(meta.getNamespace()) || ServiceAccountKey.empty(meta.getName())
                || ServiceAccountKey.empty(meta.getUid()) || saName.isEmpty()) {
            return Optional.empty();
        }
        return Optional.of(new SecretKey(meta.getNamespace(), meta.getName(), meta.getUid(), saName,
                annotations.getOrDefault(SA_UID_ANNOTATION, "")));
    }

    @Override
    public String toString() {
        return "secret " + namespace + "/" + name + " (uid " + uid + ", serviceaccount " + serviceAccountName + ")";
    }
}
