package io.satoken.controlplane.tokens;

import io.kubernetes.client.openapi.ApiException;
import io.kubernetes.client.openapi.models.V1Secret;
import io.kubernetes.client.openapi.models.V1ServiceAccount;

/** The API calls the tokens controller makes; the seam its tests record through. */
interface TokensApi {

    V1Secret getSecret(String namespace, String name) throws ApiException;

    V1Secret createSecret(V1Secret secret) throws ApiException;

    /**
     * Writes the Secret's {@code data} entries and annotations (TC-5), and nothing else, guarded by its
     * resourceVersion: 409 when the server's differs. Entries and annotations it does not name stay as they are.
     */
    V1Secret writeTokenData(V1Secret secret) throws ApiException;

    /** Deletes only the Secret with this UID (a precondition), never a same-named successor. */
    void deleteSecret(String namespace, String name, String uid) throws ApiException;

    V1ServiceAccount getServiceAccount(String namespace, String name) throws ApiException;

    /**
     * Adds {@code {name: secretName}} to the account's {@code .secrets} (TC-7), guarded by its resourceVersion;
     * the other references, and the account's other fields, stay as they are on the server.
     */
    void addSecretReference(V1ServiceAccount serviceAccount, String secretName) throws ApiException;

    /**
     * Removes every reference named {@code secretName} from the account's {@code .secrets} (TC-4), guarded by its
     * resourceVersion; the other references, and the account's other fields, stay as they are on the server.
     */
    void removeSecretReference(V1ServiceAccount serviceAccount, String secretName) throws ApiException;
}
