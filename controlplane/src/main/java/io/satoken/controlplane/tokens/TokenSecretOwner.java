package io.satoken.controlplane.tokens;

import io.kubernetes.client.openapi.models.V1Secret;
import io.satoken.controlplane.kube.Informers;
import java.util.Map;

/** Upstream's {@code IsServiceAccountToken}: whether a Secret is a token of a given ServiceAccount. */
public final class TokenSecretOwner {

    private TokenSecretOwner() {
    }

    /**
     * True when the Secret has the token type and its annotations name the account; a missing UID
     * annotation matches any UID.
     */
    public static boolean belongsTo(V1Secret secret, String saName, String saUid) {
        if (!Informers.TOKEN_SECRET_TYPE.equals(secret.getType()) || secret.getMetadata() == null) {
            return false;
        }
        Map<String, String> annotations = secret.getMetadata().getAnnotations() == null ? Map.of()
                : secret.getMetadata().getAnnotations();
        String uid = annotations.getOrDefault(SecretKey.SA_UID_ANNOTATION, "");
        return saName.equals(annotations.get(SecretKey.SA_NAME_ANNOTATION)) && (uid.isEmpty() || uid.equals(saUid));
    }
}
