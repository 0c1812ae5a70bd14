package io.satoken.controlplane.tokens;

import io.kubernetes.client.openapi.ApiException;
import io.kubernetes.client.openapi.models.V1Secret;
import io.kubernetes.client.openapi.models.V1ServiceAccount;

/** The API calls the tokens controller makes; the seam its tests record through. */
interface TokensApi {

    V1Secret getSecret(String namespace, String name) throws ApiException;

    V1Secret createSecret(V1Secret secret) throws ApiException;

    V1Secret updateSecret(V1Secret secret) throws ApiException;

    /** Deletes only the Secret with this UID (a precondition), never a same-named successor. */
    void deleteSecret(String namespace, String name, String uid) throws ApiException;

    V1ServiceAccount getServiceAccount(String namespace, String name) throws ApiException;

    V1ServiceAccount updateServiceAccount(V1ServiceAccount serviceAccount) throws ApiException;
}
