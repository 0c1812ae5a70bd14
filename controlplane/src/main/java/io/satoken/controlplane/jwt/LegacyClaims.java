package io.satoken.controlplane.jwt;

import java.util.Objects;

/**
 * What a legacy (Secret-based) ServiceAccount token says about its subject (spec 4b, CL-1..CL-3): the
 * ServiceAccount by namespace, name and UID, and the token Secret that holds it.
 */
public record LegacyClaims(String namespace, String serviceAccountName, String serviceAccountUid, String secretName) {

    public LegacyClaims {
        Objects.requireNonNull(namespace, "namespace");
        Objects.requireNonNull(serviceAccountName, "serviceAccountName");
        Objects.requireNonNull(serviceAccountUid, "serviceAccountUid");
        Objects.requireNonNull(secretName, "secretName");
    }

    /** CL-2: {@code system:serviceaccount:<namespace>:<name>}. */
    public String subject() {
        return "system:serviceaccount:" + namespace + ":" + serviceAccountName;
    }
}
