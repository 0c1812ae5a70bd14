package io.satoken.controlplane.rootca;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.google.gson.JsonObject;
import com.google.gson.JsonParser;
import io.kubernetes.client.openapi.ApiException;
import io.kubernetes.client.openapi.apis.CoreV1Api;
import io.kubernetes.client.openapi.models.V1ConfigMap;
import io.kubernetes.client.openapi.models.V1ObjectMeta;
import io.satoken.common.testing.KubeApiServer;
import io.satoken.common.testing.RequiresKubeApiServer;
import io.satoken.controlplane.kube.ApiErrors;
import io.satoken.controlplane.kube.Informers;
import io.satoken.controlplane.testing.OwnedWrites;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * RC-3's repair on a real API server: a merge patch that makes {@code data} exactly {@code {ca.crt}} and sets the
 * description, guarded by the version read; labels, other annotations and {@code binaryData} stay.
 */
@RequiresKubeApiServer
class ApiConfigMapWriterIT {

    @Test
    void repair_patchesDataAndDescriptionOnly_andKeepsTheRest(KubeApiServer server) throws Exception {
        String ns = server.createNamespace("rootca");
        new CoreV1Api(server.adminClient()).createNamespacedConfigMap(ns, new V1ConfigMap()
                .metadata(new V1ObjectMeta().name(Informers.ROOT_CA_CONFIGMAP).putLabelsItem("team", "a")
                        .putAnnotationsItem("note", "keep"))
                .data(Map.of("ca.crt", "old", "extra", "x"))
                .binaryData(Map.of("bin", "kept".getBytes(StandardCharsets.UTF_8)))).execute();
        String path = "/api/v1/namespaces/" + ns + "/configmaps/" + Informers.ROOT_CA_CONFIGMAP;
        OwnedWrites writes = new OwnedWrites(server.clientFor(server.adminToken()));
        ApiConfigMapWriter writer = new ApiConfigMapWriter(writes.client());
        JsonObject before = OwnedWrites.raw(writes.client(), path);
        V1ConfigMap current = new CoreV1Api(writes.client())
                .readNamespacedConfigMap(Informers.ROOT_CA_CONFIGMAP, ns).execute();

        writer.update(current, Map.of("ca.crt", "new CA"), RootCaSync.DESCRIPTION);

        JsonObject after = OwnedWrites.raw(writes.client(), path);
        assertThat(writes.sent()).singleElement().satisfies(sent -> {
            assertThat(sent.method()).isEqualTo("PATCH");
            assertThat(OwnedWrites.members(sent.body()))
                    .containsExactlyInAnyOrder("data", "metadata.annotations", "metadata.resourceVersion");
        });
        OwnedWrites.assertUnchangedExcept(before, after, Set.of("data", "metadata.annotations"));
        assertThat(after.get("data")).isEqualTo(JsonParser.parseString("{\"ca.crt\": \"new CA\"}")); // RC-1
        assertThat(after.getAsJsonObject("metadata").getAsJsonObject("annotations").keySet())
                .containsExactlyInAnyOrder("note", RootCaSync.DESCRIPTION_ANNOTATION);
        // RC-3: a ConfigMap changed since the cache saw it is not overwritten; the sync retries from the cache
        assertThatThrownBy(() -> writer.update(current, Map.of("ca.crt", "new CA"), RootCaSync.DESCRIPTION))
                .isInstanceOfSatisfying(ApiException.class, e -> assertThat(ApiErrors.isConflict(e)).isTrue());
    }
}
