package io.satoken.controlplane.tokens;

import io.kubernetes.client.openapi.ApiClient;
import io.kubernetes.client.openapi.ApiException;
import io.kubernetes.client.openapi.apis.CoreV1Api;
import io.kubernetes.client.openapi.models.V1DeleteOptions;
import io.kubernetes.client.openapi.models.V1Preconditions;
import io.kubernetes.client.openapi.models.V1Secret;
import io.kubernetes.client.openapi.models.V1ServiceAccount;

/** {@link TokensApi} over client-java's CoreV1 API. */
final class KubeTokensApi implements TokensApi {

    private final CoreV1Api core;

    KubeTokensApi(ApiClient client) {
        this.core = new CoreV1Api(client);
    }

    @Override
    public V1Secret getSecret(String namespace, String name) throws ApiException {
        return core.readNamespacedSecret(name, namespace).execute();
    }

    @Override
    public V1Secret createSecret(V1Secret secret) throws ApiException {
        return core.createNamespacedSecret(secret.getMetadata().getNamespace(), secret).execute();
    }

    @Override
    public V1Secret updateSecret(V1Secret secret) throws ApiException {
        return core.replaceNamespacedSecret(secret.getMetadata().getName(), secret.getMetadata().getNamespace(), secret)
                .execute();
    }

    @Override
    public void deleteSecret(String namespace, String name, String uid) throws ApiException {
        core.deleteNamespacedSecret(name, namespace)
                .body(new V1DeleteOptions().preconditions(new V1Preconditions().uid(uid)))
                .execute();
    }

    @Override
    public V1ServiceAccount getServiceAccount(String namespace, String name) throws ApiException {
        return core.readNamespacedServiceAccount(name, namespace).execute();
    }

    @Override
    public V1ServiceAccount updateServiceAccount(V1ServiceAccount sa) throws ApiException {
        return core.replaceNamespacedServiceAccount(sa.getMetadata().getName(), sa.getMetadata().getNamespace(), sa)
                .execute();
    }
}
