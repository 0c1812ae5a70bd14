package io.satoken.controlplane.aggregation;

import static org.assertj.core.api.Assertions.assertThat;

import com.google.gson.JsonObject;
import io.kubernetes.client.openapi.apis.RbacAuthorizationV1Api;
import io.kubernetes.client.openapi.models.V1AggregationRule;
import io.kubernetes.client.openapi.models.V1ClusterRole;
import io.kubernetes.client.openapi.models.V1LabelSelector;
import io.kubernetes.client.openapi.models.V1ObjectMeta;
import io.kubernetes.client.openapi.models.V1PolicyRule;
import io.satoken.common.testing.KubeApiServer;
import io.satoken.common.testing.RequiresKubeApiServer;
import io.satoken.controlplane.controller.DeepCopy;
import io.satoken.controlplane.testing.OwnedWrites;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import org.junit.jupiter.api.Test;

/**
 * CR-6's update after a 415, on a real API server: a merge patch of the rules alone, guarded by the version read;
 * the aggregationRule, labels and annotations stay (CR-7).
 */
@RequiresKubeApiServer
class ApiClusterRoleWriterIT {

    @Test
    void update_patchesTheRulesOnly_andKeepsTheRest(KubeApiServer server) throws Exception {
        String name = "owned-writes-" + UUID.randomUUID();
        RbacAuthorizationV1Api rbac = new RbacAuthorizationV1Api(server.adminClient());
        rbac.createClusterRole(new V1ClusterRole()
                .metadata(new V1ObjectMeta().name(name).putLabelsItem("team", "a").putAnnotationsItem("note", "keep"))
                .aggregationRule(new V1AggregationRule().clusterRoleSelectors(
                        List.of(new V1LabelSelector().matchLabels(Map.of("aggregate-to", name)))))
                .rules(List.of(new V1PolicyRule().apiGroups(List.of("")).resources(List.of("pods"))
                        .verbs(List.of("get"))))).execute();
        String path = "/apis/rbac.authorization.k8s.io/v1/clusterroles/" + name;
        OwnedWrites writes = new OwnedWrites(server.clientFor(server.adminToken()));
        JsonObject before = OwnedWrites.raw(writes.client(), path);
        V1ClusterRole copy = DeepCopy.of(new RbacAuthorizationV1Api(writes.client()).readClusterRole(name).execute());
        copy.setRules(List.of(new V1PolicyRule().apiGroups(List.of("")).resources(List.of("secrets"))
                .verbs(List.of("list"))));

        new ApiClusterRoleWriter(writes.client()).update(copy);

        JsonObject after = OwnedWrites.raw(writes.client(), path);
        assertThat(writes.sent()).singleElement().satisfies(sent -> {
            assertThat(sent.method()).isEqualTo("PATCH");
            assertThat(OwnedWrites.members(sent.body())).containsExactlyInAnyOrder("rules", "metadata.resourceVersion");
        });
        OwnedWrites.assertUnchangedExcept(before, after, Set.of("rules"));
        assertThat(after.getAsJsonArray("rules").get(0).getAsJsonObject().getAsJsonArray("resources").get(0)
                .getAsString()).isEqualTo("secrets");
    }
}
