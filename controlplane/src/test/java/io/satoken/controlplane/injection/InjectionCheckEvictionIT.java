package io.satoken.controlplane.injection;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.kubernetes.client.custom.IntOrString;
import io.kubernetes.client.custom.V1Patch;
import io.kubernetes.client.informer.cache.Cache;
import io.kubernetes.client.informer.cache.Lister;
import io.kubernetes.client.openapi.ApiClient;
import io.kubernetes.client.openapi.ApiException;
import io.kubernetes.client.openapi.apis.AppsV1Api;
import io.kubernetes.client.openapi.apis.CoreV1Api;
import io.kubernetes.client.openapi.apis.PolicyV1Api;
import io.kubernetes.client.openapi.apis.RbacAuthorizationV1Api;
import io.kubernetes.client.openapi.models.CoreV1Event;
import io.kubernetes.client.openapi.models.V1Container;
import io.kubernetes.client.openapi.models.V1LabelSelector;
import io.kubernetes.client.openapi.models.V1ObjectMeta;
import io.kubernetes.client.openapi.models.V1OwnerReference;
import io.kubernetes.client.openapi.models.V1Pod;
import io.kubernetes.client.openapi.models.V1PodDisruptionBudget;
import io.kubernetes.client.openapi.models.V1PodDisruptionBudgetSpec;
import io.kubernetes.client.openapi.models.V1PodSpec;
import io.kubernetes.client.openapi.models.V1PodTemplateSpec;
import io.kubernetes.client.openapi.models.V1PolicyRule;
import io.kubernetes.client.openapi.models.V1ReplicaSet;
import io.kubernetes.client.openapi.models.V1ReplicaSetSpec;
import io.kubernetes.client.openapi.models.V1Role;
import io.kubernetes.client.openapi.models.V1RoleBinding;
import io.kubernetes.client.openapi.models.RbacV1Subject;
import io.kubernetes.client.openapi.models.V1RoleRef;
import io.kubernetes.client.util.PatchUtils;
import io.satoken.common.testing.KubeApiServer;
import io.satoken.common.testing.Manifests;
import io.satoken.common.testing.RequiresKubeApiServer;
import io.satoken.controlplane.controller.Reconciler.Result;
import java.nio.file.Path;
import java.time.Duration;
import java.time.InstantSource;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The injection check's eviction on a real API server: the sync with its real seams ({@link ApiOwnerTemplates},
 * {@link ApiPodActions}), acting as the controllers' ServiceAccount with the RBAC of {@code deploy/} and the
 * Components {@code injection-check/} and {@code injection-check-delete/}, so those grants are shown to be enough.
 * No kube-controller-manager runs: the ReplicaSets' pods are made by hand (an ownerReference with controller=true),
 * and no webhook is registered, so an annotated pod is created without the token volume. A pod with a nodeName and
 * its status set to Running stands for a running one (no kubelet runs either).
 */
@RequiresKubeApiServer
class InjectionCheckEvictionIT {

    static final Path DEPLOY = Path.of("deploy");
    static final String ANNOTATION = "satoken.io/projections";
    static final String CONTROLLERS_NS = "satoken-controlplane";

    private KubeApiServer server;
    private CoreV1Api admin;
    private String ns;
    private InjectionCheckSync sync;
    private final Cache<V1Pod> cache = new Cache<>();
    /** The HTTP codes of the evictions the API server refused. */
    private final List<Integer> refused = new ArrayList<>();

    @BeforeEach
    void controllersWithTheComponentsRbac(KubeApiServer server) throws Exception {
        this.server = server;
        admin = new CoreV1Api(server.adminClient());
        Manifests.apply(server, DEPLOY.resolve("00-namespace.yaml"));
        Manifests.apply(server, DEPLOY.resolve("10-rbac.yaml"));
        Manifests.apply(server, DEPLOY.resolve("injection-check/rbac.yaml"));
        Manifests.apply(server, DEPLOY.resolve("injection-check-delete/rbac.yaml"));
        ApiClient controllers = server.clientFor(server.serviceAccountToken(CONTROLLERS_NS, "satoken-controlplane"));
        ApiPodActions api = new ApiPodActions(controllers);
        InjectionCheckSync.PodActions recording = new InjectionCheckSync.PodActions() {
            @Override
            public void warn(V1Pod pod, String reason, String message) throws ApiException {
                api.warn(pod, reason, message);
            }

            @Override
            public void evict(V1Pod pod) throws ApiException {
                try {
                    api.evict(pod);
                } catch (ApiException e) {
                    refused.add(e.getCode());
                    throw e;
                }
            }
        };
        sync = new InjectionCheckSync(new Lister<>(cache), new ReplacementCheck(new ApiOwnerTemplates(controllers)),
                recording, true, new EvictionBudget(InstantSource.system(), Duration.ofSeconds(2), 5));
        ns = server.createNamespace("inject");
    }

    /** The finding: a user who may only get, list and patch pods annotates a ReplicaSet's running pod. */
    @Test
    void podAnnotatedAfterCreation_byAUserWhoMayOnlyPatchPods_isNotEvicted() throws Exception {
        V1ReplicaSet rs = replicaSet("plain", false);
        V1Pod pod = running(createPod("plain-1", rs, false));
        ApiClient tenant = podPatcher();

        PatchUtils.patch(V1Pod.class, () -> new CoreV1Api(tenant).patchNamespacedPod("plain-1", ns, new V1Patch(
                        "{\"metadata\":{\"annotations\":{\"" + ANNOTATION + "\":\"[{path: token}]\"}}}")).buildCall(null),
                V1Patch.PATCH_FORMAT_JSON_MERGE_PATCH, tenant);

        assertThat(syncPod("plain-1")).isEqualTo(Result.DONE);
        V1Pod after = admin.readNamespacedPod("plain-1", ns).execute();
        assertThat(after.getMetadata().getUid()).isEqualTo(pod.getMetadata().getUid());
        assertThat(after.getMetadata().getDeletionTimestamp()).isNull();
        assertThat(refused).isEmpty();
        assertThat(event("plain-1")).contains("the annotation was added after the pod was created (the pod template of"
                + " its ReplicaSet plain has no " + ANNOTATION + ")").doesNotContain("Evicting");
        assertThat(sync.missing()).isEqualTo(1);
    }

    @Test
    void podOfAReplicaSetWhoseTemplateAsksForTokens_createdWithoutTheVolume_isEvicted() throws Exception {
        V1ReplicaSet rs = replicaSet("asks", true);
        createPod("asks-1", rs, true); // Pending, on no node: an eviction deletes it at once

        assertThat(syncPod("asks-1")).isEqualTo(Result.DONE);

        assertThat(refused).isEmpty();
        assertThatThrownBy(() -> admin.readNamespacedPod("asks-1", ns).execute())
                .isInstanceOfSatisfying(ApiException.class, e -> assertThat(e.getCode()).isEqualTo(404));
        assertThat(event("asks-1")).contains("Evicting it, as PodDisruptionBudgets allow, so that its ReplicaSet asks"
                + " creates it again.");
    }

    /**
     * A PodDisruptionBudget selects the pod; without the disruption controller its status allows no disruption, so the
     * API server refuses the eviction (429) and the sync tries again later.
     */
    @Test
    void podProtectedByADisruptionBudget_isNotEvicted_andTriedAgain() throws Exception {
        V1ReplicaSet rs = replicaSet("guarded", true);
        V1Pod pod = running(createPod("guarded-1", rs, true));
        new PolicyV1Api(server.adminClient()).createNamespacedPodDisruptionBudget(ns, new V1PodDisruptionBudget()
                .metadata(new V1ObjectMeta().name("guarded"))
                .spec(new V1PodDisruptionBudgetSpec().minAvailable(new IntOrString(1))
                        .selector(new V1LabelSelector().matchLabels(Map.of("app", "guarded"))))).execute();

        assertThat(syncPod("guarded-1")).isEqualTo(Result.RETRY);

        assertThat(refused).containsExactly(429);
        V1Pod after = admin.readNamespacedPod("guarded-1", ns).execute();
        assertThat(after.getMetadata().getUid()).isEqualTo(pod.getMetadata().getUid());
        assertThat(after.getMetadata().getDeletionTimestamp()).isNull();
    }

    // --- the pieces -----------------------------------------------------------------------------

    /** Puts the pod as the API server has it now into the cache, and syncs it. */
    private Result syncPod(String name) throws ApiException {
        cache.add(admin.readNamespacedPod(name, ns).execute());
        return sync.reconcile(ns + "/" + name);
    }

    private V1ReplicaSet replicaSet(String name, boolean asksForTokens) throws ApiException {
        V1ObjectMeta template = new V1ObjectMeta().labels(Map.of("app", name));
        if (asksForTokens) {
            template.putAnnotationsItem(ANNOTATION, "[{path: token}]");
        }
        return new AppsV1Api(server.adminClient()).createNamespacedReplicaSet(ns, new V1ReplicaSet()
                .metadata(new V1ObjectMeta().name(name))
                .spec(new V1ReplicaSetSpec().replicas(1).selector(new V1LabelSelector().matchLabels(Map.of("app", name)))
                        .template(new V1PodTemplateSpec().metadata(template).spec(podSpec())))).execute();
    }

    /** The ReplicaSet's pod as its controller would make it, minus the webhook's volume. */
    private V1Pod createPod(String name, V1ReplicaSet owner, boolean annotated) throws ApiException {
        V1ObjectMeta meta = new V1ObjectMeta().name(name).labels(Map.of("app", owner.getMetadata().getName()))
                .addOwnerReferencesItem(new V1OwnerReference().apiVersion("apps/v1").kind("ReplicaSet")
                        .name(owner.getMetadata().getName()).uid(owner.getMetadata().getUid()).controller(true));
        if (annotated) {
            meta.putAnnotationsItem(ANNOTATION, "[{path: token}]");
        }
        return admin.createNamespacedPod(ns, new V1Pod().metadata(meta).spec(podSpec())).execute();
    }

    /** The pod bound to a node and reported Running, as a kubelet would. */
    private V1Pod running(V1Pod pod) throws ApiException {
        String name = pod.getMetadata().getName();
        ApiClient client = server.adminClient();
        admin.createNamespacedPodBinding(name, ns, new io.kubernetes.client.openapi.models.V1Binding()
                .metadata(new V1ObjectMeta().name(name))
                .target(new io.kubernetes.client.openapi.models.V1ObjectReference().kind("Node").name("node-1")))
                .execute();
        return PatchUtils.patch(V1Pod.class, () -> admin.patchNamespacedPodStatus(name, ns,
                        new V1Patch("{\"status\":{\"phase\":\"Running\"}}")).buildCall(null),
                V1Patch.PATCH_FORMAT_JSON_MERGE_PATCH, client);
    }

    /** A client for a ServiceAccount of the test namespace that may get, list and patch pods there, nothing else. */
    private ApiClient podPatcher() throws ApiException {
        RbacAuthorizationV1Api rbac = new RbacAuthorizationV1Api(server.adminClient());
        rbac.createNamespacedRole(ns, new V1Role().metadata(new V1ObjectMeta().name("pod-patcher"))
                .addRulesItem(new V1PolicyRule().addApiGroupsItem("").addResourcesItem("pods")
                        .verbs(List.of("get", "list", "patch")))).execute();
        rbac.createNamespacedRoleBinding(ns, new V1RoleBinding().metadata(new V1ObjectMeta().name("pod-patcher"))
                .roleRef(new V1RoleRef().apiGroup("rbac.authorization.k8s.io").kind("Role").name("pod-patcher"))
                .addSubjectsItem(new RbacV1Subject().kind("ServiceAccount").name("tenant").namespace(ns))).execute();
        return server.clientFor(server.serviceAccountToken(ns, "tenant"));
    }

    private String event(String pod) throws ApiException {
        return admin.listNamespacedEvent(ns).fieldSelector("involvedObject.name=" + pod).execute().getItems().stream()
                .filter(e -> InjectionCheckSync.REASON.equals(e.getReason())).map(CoreV1Event::getMessage)
                .findFirst().orElseThrow(() -> new AssertionError("no " + InjectionCheckSync.REASON + " Event on "
                        + pod));
    }

    private static V1PodSpec podSpec() {
        V1PodSpec spec = new V1PodSpec().addContainersItem(new V1Container().name("app").image("satoken.test/app:1"));
        // client-java's models start overhead as {}, which RuntimeClass admission refuses without a RuntimeClass
        spec.setOverhead(null);
        return spec;
    }
}
