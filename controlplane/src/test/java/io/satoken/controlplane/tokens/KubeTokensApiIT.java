package io.satoken.controlplane.tokens;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.google.gson.JsonObject;
import io.kubernetes.client.openapi.ApiException;
import io.kubernetes.client.openapi.apis.CoreV1Api;
import io.kubernetes.client.openapi.models.V1LocalObjectReference;
import io.kubernetes.client.openapi.models.V1ObjectMeta;
import io.kubernetes.client.openapi.models.V1ObjectReference;
import io.kubernetes.client.openapi.models.V1Secret;
import io.kubernetes.client.openapi.models.V1ServiceAccount;
import io.satoken.common.testing.KubeApiServer;
import io.satoken.common.testing.RequiresKubeApiServer;
import io.satoken.controlplane.kube.ApiErrors;
import io.satoken.controlplane.testing.OwnedWrites;
import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * The tokens controller's writes on a real API server (TC-4, TC-5, TC-7): each is a patch of what the controller
 * owns, guarded by the resourceVersion it read, and leaves every other field of the object as the server had it,
 * including fields client-java's models do not know.
 */
@RequiresKubeApiServer
class KubeTokensApiIT {

    @Test
    void fillingATokenSecret_patchesDataAndAnnotationsOnly_andKeepsTheRest(KubeApiServer server) throws Exception {
        String ns = server.createNamespace("fill");
        CoreV1Api core = new CoreV1Api(server.adminClient());
        core.createNamespacedServiceAccount(ns, new V1ServiceAccount().metadata(new V1ObjectMeta().name("app")))
                .execute();
        core.createNamespacedSecret(ns, new V1Secret().type("kubernetes.io/service-account-token")
                .metadata(new V1ObjectMeta().name("app-token").putLabelsItem("team", "a")
                        .putAnnotationsItem(SecretKey.SA_NAME_ANNOTATION, "app").putAnnotationsItem("note", "keep"))
                .putDataItem("extra", bytes("kept"))).execute();
        String path = "/api/v1/namespaces/" + ns + "/secrets/app-token";
        OwnedWrites writes = new OwnedWrites(server.clientFor(server.adminToken()));
        KubeTokensApi api = new KubeTokensApi(writes.client());
        JsonObject before = OwnedWrites.raw(writes.client(), path);

        V1Secret live = api.getSecret(ns, "app-token");
        V1Secret filled = fill(live);
        api.writeTokenData(filled);

        JsonObject after = OwnedWrites.raw(writes.client(), path);
        assertThat(writes.sent()).singleElement().satisfies(sent -> {
            assertThat(sent.method()).isEqualTo("PATCH");
            assertThat(sent.contentType()).startsWith("application/merge-patch+json");
            assertThat(OwnedWrites.members(sent.body()))
                    .isSubsetOf("data", "metadata.annotations", "metadata.resourceVersion");
        });
        OwnedWrites.assertUnchangedExcept(before, after, Set.of("data", "metadata.annotations"));
        assertThat(after.getAsJsonObject("data").keySet()).containsExactlyInAnyOrder("extra", "token", "namespace",
                "ca.crt");
        assertThat(after.getAsJsonObject("metadata").getAsJsonObject("annotations").keySet())
                .contains("note", SecretKey.SA_NAME_ANNOTATION, SecretKey.SA_UID_ANNOTATION);
        // TC-5: a Secret that changed since it was read is not written (409, not retried)
        assertThatThrownBy(() -> api.writeTokenData(fill(live)))
                .isInstanceOfSatisfying(ApiException.class, e -> assertThat(ApiErrors.isConflict(e)).isTrue());
    }

    @Test
    void secretReferences_areAddedAndRemovedByName_andTheRestOfTheAccountStays(KubeApiServer server)
            throws Exception {
        String ns = server.createNamespace("refs");
        CoreV1Api core = new CoreV1Api(server.adminClient());
        core.createNamespacedServiceAccount(ns, new V1ServiceAccount()
                .metadata(new V1ObjectMeta().name("app").putLabelsItem("team", "a").putAnnotationsItem("note", "keep"))
                .automountServiceAccountToken(false)
                .imagePullSecrets(List.of(new V1LocalObjectReference().name("pull")))
                .secrets(List.of(new V1ObjectReference().name("keep-1"), new V1ObjectReference().name("gone"),
                        new V1ObjectReference().name("keep-2")))).execute();
        String path = "/api/v1/namespaces/" + ns + "/serviceaccounts/app";
        OwnedWrites writes = new OwnedWrites(server.clientFor(server.adminToken()));
        KubeTokensApi api = new KubeTokensApi(writes.client());
        JsonObject before = OwnedWrites.raw(writes.client(), path);

        V1ServiceAccount live = api.getServiceAccount(ns, "app");
        api.removeSecretReference(live, "gone"); // TC-4
        JsonObject removed = OwnedWrites.raw(writes.client(), path);
        api.addSecretReference(api.getServiceAccount(ns, "app"), "added"); // TC-7
        JsonObject added = OwnedWrites.raw(writes.client(), path);

        assertThat(writes.sent()).hasSize(2).allSatisfy(sent -> {
            assertThat(sent.method()).isEqualTo("PATCH");
            assertThat(sent.contentType()).startsWith("application/strategic-merge-patch+json");
            assertThat(OwnedWrites.members(sent.body()))
                    .isSubsetOf("secrets", "$setElementOrder/secrets", "metadata.resourceVersion");
        });
        OwnedWrites.assertUnchangedExcept(before, removed, Set.of("secrets"));
        OwnedWrites.assertUnchangedExcept(before, added, Set.of("secrets"));
        assertThat(names(removed)).containsExactly("keep-1", "keep-2");
        assertThat(names(added)).containsExactly("keep-1", "keep-2", "added");
        // TC-4: retried on conflict, which needs the conflict: the account changed since `live` was read
        assertThatThrownBy(() -> api.removeSecretReference(live, "keep-1"))
                .isInstanceOfSatisfying(ApiException.class, e -> assertThat(ApiErrors.isConflict(e)).isTrue());
    }

    private static List<String> names(JsonObject account) {
        return account.getAsJsonArray("secrets").asList().stream()
                .map(e -> e.getAsJsonObject().get("name").getAsString()).toList();
    }

    /** What TokenSync.fillIfNeeded does to the live Secret before it writes. */
    private static V1Secret fill(V1Secret live) {
        V1Secret copy = io.satoken.controlplane.controller.DeepCopy.of(live);
        Map<String, byte[]> data = new HashMap<>(copy.getData() == null ? Map.of() : copy.getData());
        data.put("token", bytes("not.a.real-token"));
        data.put("namespace", bytes(copy.getMetadata().getNamespace()));
        data.put("ca.crt", bytes("-----BEGIN CERTIFICATE-----"));
        copy.setData(data);
        copy.getMetadata().putAnnotationsItem(SecretKey.SA_UID_ANNOTATION, "0000-uid");
        return copy;
    }

    private static byte[] bytes(String text) {
        return text.getBytes(StandardCharsets.UTF_8);
    }
}
