package io.satoken.controlplane.aggregation;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.google.gson.JsonParser;
import io.kubernetes.client.custom.V1Patch;
import io.kubernetes.client.openapi.ApiClient;
import io.kubernetes.client.openapi.ApiException;
import io.kubernetes.client.openapi.apis.RbacAuthorizationV1Api;
import io.kubernetes.client.openapi.models.V1AggregationRule;
import io.kubernetes.client.openapi.models.V1ClusterRole;
import io.kubernetes.client.openapi.models.V1LabelSelector;
import io.kubernetes.client.openapi.models.V1ObjectMeta;
import io.kubernetes.client.openapi.models.V1PolicyRule;
import io.kubernetes.client.util.PatchUtils;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.satoken.common.testing.KubeApiServer;
import io.satoken.common.testing.RequiresKubeApiServer;
import io.satoken.controlplane.controller.ControllerMetrics;
import io.satoken.controlplane.kube.Informers;
import java.io.IOException;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import okhttp3.Request;
import okhttp3.Response;
import org.junit.jupiter.api.Test;

/** The aggregation controller against a real kube-apiserver: the example of the original design, end to end. */
@RequiresKubeApiServer
class AggregationControllerIT {

    private static final Duration WAIT = Duration.ofSeconds(30);
    private static final String LABEL = "rbac.example.com/aggregate-to-monitoring";
    private static final List<V1PolicyRule> ENDPOINT_RULES = List.of(new V1PolicyRule()
            .apiGroups(List.of("")).resources(List.of("services", "endpoints", "pods"))
            .verbs(List.of("get", "list", "watch")));

    private KubeApiServer server;
    private RbacAuthorizationV1Api rbac;
    private Informers informers;
    private AggregationController controller;
    private SimpleMeterRegistry registry;

    @BeforeEach
    void start(KubeApiServer server) {
        this.server = server;
        rbac = new RbacAuthorizationV1Api(server.adminClient());
        ApiClient watch = server.clientFor(server.adminToken());
        watch.setReadTimeout(0);
        informers = new Informers(watch);
        registry = new SimpleMeterRegistry();
        controller = new AggregationController(informers, server.adminClient(), 2, new ControllerMetrics(registry));
        informers.start();
        await().atMost(WAIT).until(informers::synced);
        controller.start();
    }

    @AfterEach
    void stop() throws ApiException {
        controller.close();
        informers.close();
        for (String name : List.of("monitoring", "monitoring-endpoints", "monitoring-nodes")) {
            try {
                rbac.deleteClusterRole(name).execute();
            } catch (ApiException e) {
                if (e.getCode() != 404) {
                    throw e;
                }
            }
        }
    }

    @Test
    void monitoring_getsTheRulesOfRolesLabelledForIt_andLosesThemWithTheLabel() throws Exception {
        rbac.createClusterRole(new V1ClusterRole().metadata(new V1ObjectMeta().name("monitoring"))
                .aggregationRule(new V1AggregationRule().addClusterRoleSelectorsItem(
                        new V1LabelSelector().matchLabels(Map.of(LABEL, "true"))))).execute();
        rbac.createClusterRole(new V1ClusterRole()
                .metadata(new V1ObjectMeta().name("monitoring-endpoints").labels(Map.of(LABEL, "true")))
                .rules(ENDPOINT_RULES)).execute();

        await().atMost(WAIT).until(() -> Rule.of(read("monitoring").getRules()).equals(Rule.of(ENDPOINT_RULES)));
        V1ClusterRole monitoring = read("monitoring");
        assertThat(managers("monitoring")).contains(Map.entry(ClusterRoleWriter.FIELD_MANAGER, "Apply"));
        assertThat(monitoring.getAggregationRule().getClusterRoleSelectors().get(0).getMatchLabels())
                .as("CR-7: the aggregationRule is left alone").containsExactly(Map.entry(LABEL, "true"));

        V1ClusterRole endpoints = read("monitoring-endpoints");
        endpoints.getMetadata().setLabels(new HashMap<>());
        rbac.replaceClusterRole("monitoring-endpoints", endpoints).execute();

        await().atMost(WAIT).until(() -> Rule.of(read("monitoring").getRules()).isEmpty());
        assertThat(registry.get("satoken_aggregation_writes_total").tag("kind", "apply").counter().count())
                .isGreaterThanOrEqualTo(2);
    }

    @Test
    void rulesEditedByHand_areRestored_andUnrelatedChangesWriteNothing() throws Exception {
        rbac.createClusterRole(new V1ClusterRole()
                .metadata(new V1ObjectMeta().name("monitoring-endpoints").labels(Map.of(LABEL, "true")))
                .rules(ENDPOINT_RULES)).execute();
        rbac.createClusterRole(new V1ClusterRole().metadata(new V1ObjectMeta().name("monitoring"))
                .aggregationRule(new V1AggregationRule().addClusterRoleSelectorsItem(
                        new V1LabelSelector().matchLabels(Map.of(LABEL, "true"))))).execute();
        await().atMost(WAIT).until(() -> Rule.of(read("monitoring").getRules()).equals(Rule.of(ENDPOINT_RULES)));

        // someone edits the aggregate's rules with a JSON merge patch: the controller puts them back
        PatchUtils.patch(V1ClusterRole.class, () -> rbac.patchClusterRole("monitoring",
                new V1Patch("{\"rules\":[{\"apiGroups\":[\"\"],\"resources\":[\"secrets\"],\"verbs\":[\"get\"]}]}"))
                .buildCall(null), V1Patch.PATCH_FORMAT_JSON_MERGE_PATCH, rbac.getApiClient());
        await().atMost(WAIT).until(() -> Rule.of(read("monitoring").getRules()).equals(Rule.of(ENDPOINT_RULES)));

        // a role nobody selects changes: monitoring is not even synced, let alone written
        double syncs = quietSyncs();
        String version = read("monitoring").getMetadata().getResourceVersion();
        rbac.createClusterRole(new V1ClusterRole()
                .metadata(new V1ObjectMeta().name("monitoring-nodes").labels(Map.of("unrelated", "true")))
                .rules(List.of(new V1PolicyRule().apiGroups(List.of("")).resources(List.of("nodes")).verbs(List.of("get"))))).execute();
        await().during(Duration.ofSeconds(2)).atMost(WAIT)
                .until(() -> read("monitoring").getMetadata().getResourceVersion().equals(version));
        assertThat(syncs()).isEqualTo(syncs);

        // labelled for it, it joins: the aggregate is the two roles' rules, by name
        V1ClusterRole nodes = read("monitoring-nodes");
        nodes.getMetadata().putLabelsItem(LABEL, "true");
        rbac.replaceClusterRole("monitoring-nodes", nodes).execute();
        await().atMost(WAIT).until(() -> Rule.of(read("monitoring").getRules())
                .equals(Rule.of(Roles.concat(ENDPOINT_RULES, nodes.getRules()))));
    }

    /** The controller's sync count once it has stopped moving for a second (the last write's echo is done). */
    private double quietSyncs() {
        AtomicReference<Double> last = new AtomicReference<>(-1.0);
        await().during(Duration.ofSeconds(1)).atMost(WAIT).until(() -> syncs() == last.getAndSet(syncs()));
        return syncs();
    }

    private double syncs() {
        return registry.find("satoken_controller_reconcile").tag("controller", AggregationController.NAME).timers()
                .stream().mapToDouble(t -> t.count()).sum();
    }

    /**
     * The role's managedFields as manager → operation, from the raw JSON: client-java leaves managedFields
     * out of the objects it decodes (kubernetes-client/java#3995).
     */
    private Map<String, String> managers(String name) throws IOException {
        ApiClient client = rbac.getApiClient();
        Request get = new Request.Builder()
                .url(client.getBasePath() + "/apis/rbac.authorization.k8s.io/v1/clusterroles/" + name)
                .header("Authorization", "Bearer " + server.adminToken()).build();
        try (Response response = client.getHttpClient().newCall(get).execute()) {
            assertThat(response.code()).isEqualTo(200);
            Map<String, String> managers = new HashMap<>();
            JsonParser.parseString(response.body().string()).getAsJsonObject().getAsJsonObject("metadata")
                    .getAsJsonArray("managedFields").forEach(entry -> managers.put(
                            entry.getAsJsonObject().get("manager").getAsString(),
                            entry.getAsJsonObject().get("operation").getAsString()));
            return managers;
        }
    }

    private V1ClusterRole read(String name) throws ApiException {
        return rbac.readClusterRole(name).execute();
    }
}
