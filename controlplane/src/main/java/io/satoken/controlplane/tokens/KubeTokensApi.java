package io.satoken.controlplane.tokens;

import com.google.gson.JsonArray;
import com.google.gson.JsonObject;
import io.kubernetes.client.openapi.ApiClient;
import io.kubernetes.client.openapi.ApiException;
import io.kubernetes.client.openapi.apis.CoreV1Api;
import io.kubernetes.client.openapi.models.V1DeleteOptions;
import io.kubernetes.client.openapi.models.V1ObjectMeta;
import io.kubernetes.client.openapi.models.V1Preconditions;
import io.kubernetes.client.openapi.models.V1Secret;
import io.kubernetes.client.openapi.models.V1ServiceAccount;
import io.satoken.controlplane.kube.OwnedPatch;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/** {@link TokensApi} over client-java's CoreV1 API; its writes are patches of the fields the controller owns. */
final class KubeTokensApi implements TokensApi {

    private final ApiClient client;
    private final CoreV1Api core;

    KubeTokensApi(ApiClient client) {
        this.client = client;
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

    /** A merge patch of {@code data} and annotations; never a PUT, which would drop fields the model lacks. */
    @Override
    public V1Secret writeTokenData(V1Secret secret) throws ApiException {
        V1ObjectMeta meta = secret.getMetadata();
        JsonObject data = new JsonObject();
        Optional.ofNullable(secret.getData()).orElse(Map.of())
                .forEach((key, value) -> data.addProperty(key, Base64.getEncoder().encodeToString(value)));
        return OwnedPatch.merge(meta.getResourceVersion())
                .annotations(Optional.ofNullable(meta.getAnnotations()).orElse(Map.of()))
                .set("data", data)
                .send(client, V1Secret.class,
                        patch -> core.patchNamespacedSecret(meta.getName(), meta.getNamespace(), patch).buildCall(null));
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

    /**
     * A strategic merge patch: {@code .secrets} merges by name, so no other reference is rewritten; the order
     * directive puts the new one last, as TC-7 appends it (a plain merge would put it first).
     */
    @Override
    public void addSecretReference(V1ServiceAccount sa, String secretName) throws ApiException {
        JsonObject reference = new JsonObject();
        reference.addProperty("name", secretName);
        JsonArray order = new JsonArray();
        Optional.ofNullable(sa.getSecrets()).orElse(List.of()).forEach(existing -> {
            JsonObject name = new JsonObject();
            name.addProperty("name", existing.getName());
            order.add(name);
        });
        order.add(reference.deepCopy());
        patchSecrets(sa, reference, order);
    }

    /** A strategic merge patch with a {@code $patch: delete} item: the API server drops that name, only. */
    @Override
    public void removeSecretReference(V1ServiceAccount sa, String secretName) throws ApiException {
        JsonObject reference = new JsonObject();
        reference.addProperty("name", secretName);
        reference.addProperty("$patch", "delete");
        patchSecrets(sa, reference, null);
    }

    private void patchSecrets(V1ServiceAccount sa, JsonObject item, JsonArray order) throws ApiException {
        V1ObjectMeta meta = sa.getMetadata();
        JsonArray secrets = new JsonArray();
        secrets.add(item);
        OwnedPatch owned = OwnedPatch.strategic(meta.getResourceVersion()).set("secrets", secrets);
        if (order != null) {
            owned.set("$setElementOrder/secrets", order);
        }
        owned.send(client, V1ServiceAccount.class,
                patch -> core.patchNamespacedServiceAccount(meta.getName(), meta.getNamespace(), patch).buildCall(null));
    }
}
