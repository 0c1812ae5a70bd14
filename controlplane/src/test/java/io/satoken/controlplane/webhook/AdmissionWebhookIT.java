package io.satoken.controlplane.webhook;

import io.satoken.controlplane.runtime.AdmissionWebhook;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.kubernetes.client.openapi.ApiClient;
import io.kubernetes.client.openapi.ApiException;
import io.kubernetes.client.openapi.apis.CoreV1Api;
import io.kubernetes.client.openapi.models.AuthenticationV1TokenRequest;
import io.kubernetes.client.openapi.models.V1BoundObjectReference;
import io.kubernetes.client.openapi.models.V1CSIVolumeSource;
import io.kubernetes.client.openapi.models.V1Capabilities;
import io.kubernetes.client.openapi.models.V1Container;
import io.kubernetes.client.openapi.models.V1HostPathVolumeSource;
import io.kubernetes.client.openapi.models.V1Namespace;
import io.kubernetes.client.openapi.models.V1ObjectMeta;
import io.kubernetes.client.openapi.models.V1Pod;
import io.kubernetes.client.openapi.models.V1PodSecurityContext;
import io.kubernetes.client.openapi.models.V1PodSpec;
import io.kubernetes.client.openapi.models.V1SeccompProfile;
import io.kubernetes.client.openapi.models.V1SecurityContext;
import io.kubernetes.client.openapi.models.V1TokenRequestSpec;
import io.kubernetes.client.openapi.models.V1Volume;
import io.satoken.common.testing.KubeApiServer;
import io.satoken.common.testing.RequiresKubeApiServer;
import io.satoken.controlplane.runtime.ControlplaneRuntime;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The webhook registered with a real kube-apiserver whose built-in ServiceAccount admission plugin is
 * disabled (the harness's default): pods get their ServiceAccount's token through us, missing accounts are
 * refused with our message, annotated pods get the agent's CSI volume and still meet the restricted Pod
 * Security level, and an agent's token requests are confined to its node's pods, by live uid, to what their
 * agent volumes ask for (NT-1..NT-6).
 */
@RequiresKubeApiServer
public class AdmissionWebhookIT {

    static final String AGENT_NAMESPACE = WebhookFixture.AGENT_NAMESPACE;
    static final String AGENT = WebhookFixture.AGENT;

    static KubeApiServer server;
    static WebhookFixture webhook;
    static ControlplaneRuntime runtime;
    static CoreV1Api admin;
    static String namespace;
    /** Created by {@link #agent()} for the tests that act as the agent. */
    static CoreV1Api agentApi;

    @BeforeAll
    static void start() throws Exception {
        server = KubeApiServer.create().start();
        ApiClient client = server.adminClient();
        admin = new CoreV1Api(client);
        webhook = WebhookFixture.start(server, Set.of("serviceaccounts"), AdmissionWebhook.WEBHOOKS.keySet());
        runtime = webhook.runtime();
        webhook.registerPodWebhook();
        webhook.registerTokenWebhook();
        namespace = server.createNamespace("app");
        // the API server picks webhook configurations up asynchronously: wait until a pod is mutated
        Awaitility.await().atMost(Duration.ofSeconds(60)).pollInterval(Duration.ofMillis(200)).until(() -> {
            V1Pod probe = admin.createNamespacedPod(namespace, pod("probe-" + System.nanoTime(), null)).dryRun("All")
                    .execute();
            return "default".equals(probe.getSpec().getServiceAccountName());
        });
    }

    @AfterAll
    static void stop() {
        if (webhook != null) {
            webhook.close();
        }
        if (server != null) {
            server.close();
        }
    }

    @Test
    void pod_withoutAServiceAccount_getsDefaultAndItsProjectedToken() throws Exception {
        V1Pod created = admin.createNamespacedPod(namespace, pod("plain", null)).execute();

        assertThat(created.getSpec().getServiceAccountName()).isEqualTo("default");
        V1Volume volume = created.getSpec().getVolumes().get(0);
        assertThat(volume.getName()).matches("kube-api-access-[bcdfghjklmnpqrstvwxz2456789]{5}");
        assertThat(volume.getProjected().getDefaultMode()).isEqualTo(0644);
        assertThat(volume.getProjected().getSources()).hasSize(3);
        assertThat(volume.getProjected().getSources().get(0).getServiceAccountToken().getExpirationSeconds())
                .isEqualTo(3607L);
        assertThat(volume.getProjected().getSources().get(1).getConfigMap().getName()).isEqualTo("kube-root-ca.crt");
        assertThat(volume.getProjected().getSources().get(2).getDownwardAPI().getItems().get(0).getFieldRef()
                .getFieldPath()).isEqualTo("metadata.namespace");
        assertThat(created.getSpec().getContainers().get(0).getVolumeMounts()).singleElement().satisfies(mount -> {
            assertThat(mount.getName()).isEqualTo(volume.getName());
            assertThat(mount.getMountPath()).isEqualTo("/var/run/secrets/kubernetes.io/serviceaccount");
            assertThat(mount.getReadOnly()).isTrue();
        });
    }

    @Test
    void pod_namingAMissingServiceAccount_deniedWithOurMessage() {
        V1Pod pod = pod("orphan", null);
        pod.getSpec().serviceAccountName("missing");

        assertThatThrownBy(() -> admin.createNamespacedPod(namespace, pod).execute())
                .isInstanceOfSatisfying(ApiException.class, e -> {
                    assertThat(e.getCode()).isEqualTo(403);
                    assertThat(e.getResponseBody()).contains("denied the request: pods \\\"orphan\\\" is forbidden: "
                            + "error looking up service account " + namespace + "/missing: serviceaccount "
                            + "\\\"missing\\\" not found");
                });
    }

    @Test
    void pod_askingForAgentTokensInARestrictedNamespace_getsCsiVolumeAndIsAdmitted() throws Exception {
        String restricted = restrictedNamespace();
        String projections = "- path: vault/token\n  audience: vault\n";
        V1Pod pod = restrictedPod(pod("vault-client", Map.of("satoken.io/projections", projections)));

        V1Pod created = admin.createNamespacedPod(restricted, pod).execute();

        // Pod Security admission checks the pod after every mutating webhook: the injected volume passed it
        assertThat(created.getSpec().getVolumes()).filteredOn(v -> "satoken-agent-tokens".equals(v.getName()))
                .singleElement().satisfies(volume -> {
                    assertThat(volume.getHostPath()).isNull();
                    assertThat(volume.getCsi().getDriver()).isEqualTo("tokens.satoken.io");
                    assertThat(volume.getCsi().getReadOnly()).isTrue();
                    assertThat(volume.getCsi().getVolumeAttributes()).isEqualTo(Map.of("projections", projections));
                });
        V1Container container = created.getSpec().getContainers().get(0);
        assertThat(container.getVolumeMounts()).filteredOn(m -> "satoken-agent-tokens".equals(m.getName()))
                .singleElement().satisfies(mount -> {
                    assertThat(mount.getMountPath()).isEqualTo("/var/run/secrets/satoken");
                    assertThat(mount.getReadOnly()).isTrue();
                    assertThat(mount.getSubPathExpr()).isNull();
                });
        assertThat(container.getEnv()).isNullOrEmpty();
    }

    @Test
    void restrictedNamespace_refusesTheHostPathTheInjectionUsedToAdd() throws Exception {
        // the control for the test above: the namespace really enforces the restricted level
        String restricted = restrictedNamespace();
        V1Pod pod = restrictedPod(pod("host-reader", null));
        pod.getSpec().addVolumesItem(new V1Volume().name("pods")
                .hostPath(new V1HostPathVolumeSource().path("/var/lib/kubelet/pods")));

        assertThatThrownBy(() -> admin.createNamespacedPod(restricted, pod).execute())
                .isInstanceOfSatisfying(ApiException.class, e -> {
                    assertThat(e.getCode()).isEqualTo(403);
                    assertThat(e.getResponseBody()).contains("violates PodSecurity \\\"restricted:").contains("hostPath");
                });
    }

    @Test
    void projectionsAnnotation_invalid_deniedWithTheAgentsMessage() {
        V1Pod pod = pod("bad-annotation", Map.of("satoken.io/projections", "- path: /etc/passwd\n"));

        assertThatThrownBy(() -> admin.createNamespacedPod(namespace, pod).execute())
                .isInstanceOfSatisfying(ApiException.class, e -> {
                    assertThat(e.getCode()).isEqualTo(422);
                    assertThat(e.getResponseBody()).contains("satoken.io/projections[0].path");
                });
    }

    @Test
    void agent_getsTokens_onlyForPodsOnItsOwnNode() throws Exception {
        CoreV1Api asAgent = agent();
        V1Pod near = admin.createNamespacedPod(namespace, onNode(asking(pod("web-a", null), "vault"), "node-a", "web"))
                .execute();
        V1Pod far = admin.createNamespacedPod(namespace, onNode(asking(pod("web-b", null), "vault"), "node-b", "web"))
                .execute();

        assertThat(asAgent.createNamespacedServiceAccountToken("web", namespace, boundTo(near, "vault")).execute()
                .getStatus().getToken()).isNotEmpty();
        assertDenied(() -> asAgent.createNamespacedServiceAccountToken("web", namespace, boundTo(far, "vault")).execute(),
                "NT-4: pod " + namespace + "/web-b is on node node-b, but the agent pod satoken-agent/agent-a is on "
                        + "node node-a");
    }

    @Test
    void agent_getsOnlyTheAudience_thePodsVolumeAsksFor() throws Exception {
        CoreV1Api asAgent = agent();
        V1Pod vault = admin.createNamespacedPod(namespace, onNode(asking(pod("vault-user", null), "vault"), "node-a",
                "web")).execute();
        V1Pod plain = admin.createNamespacedPod(namespace, onNode(asking(pod("api-user", null), null), "node-a",
                "web")).execute();

        assertDenied(() -> asAgent.createNamespacedServiceAccountToken("web", namespace, boundTo(vault, "admin"))
                .execute(), "NT-6: spec.audiences [admin] and spec.expirationSeconds 3600 are not what pod "
                + namespace + "/vault-user's tokens.satoken.io volumes ask for");
        // PV-3: the agent sends no audiences; the API server fills in its own before this webhook sees them
        assertThat(asAgent.createNamespacedServiceAccountToken("web", namespace, boundTo(plain, null)).execute()
                .getStatus().getToken()).isNotEmpty();
    }

    @Test
    void agent_requestWithoutThePodsUid_denied() throws Exception {
        CoreV1Api asAgent = agent();
        V1Pod web = admin.createNamespacedPod(namespace, onNode(asking(pod("web-no-uid", null), "vault"), "node-a",
                "web")).execute();
        AuthenticationV1TokenRequest request = boundTo(web, "vault");
        request.getSpec().getBoundObjectRef().uid(null);

        assertDenied(() -> asAgent.createNamespacedServiceAccountToken("web", namespace, request).execute(),
                "NT-2: spec.boundObjectRef.uid: Required value");
    }

    @Test
    void agent_podRecreatedOnAnotherNode_getsNoToken() throws Exception {
        CoreV1Api asAgent = agent();
        V1Pod first = admin.createNamespacedPod(namespace, onNode(asking(pod("web-r", null), "vault"), "node-a", "web"))
                .execute();
        assertThat(asAgent.createNamespacedServiceAccountToken("web", namespace, boundTo(first, "vault")).execute()
                .getStatus().getToken()).isNotEmpty();

        admin.deleteNamespacedPod("web-r", namespace).gracePeriodSeconds(0).execute();
        Awaitility.await().atMost(Duration.ofSeconds(30)).until(() -> {
            try {
                admin.readNamespacedPod("web-r", namespace).execute();
                return false;
            } catch (ApiException e) {
                return e.getCode() == 404;
            }
        });
        V1Pod second = admin.createNamespacedPod(namespace, onNode(asking(pod("web-r", null), "vault"), "node-b",
                "web")).execute();

        // the old uid: refused by this webhook itself (403), before the API server's own uid check (409)
        assertDenied(() -> asAgent.createNamespacedServiceAccountToken("web", namespace, boundTo(first, "vault"))
                .execute(), "NT-3: spec.boundObjectRef: pod " + namespace + "/web-r with uid "
                + first.getMetadata().getUid() + " does not exist");
        assertDenied(() -> asAgent.createNamespacedServiceAccountToken("web", namespace, boundTo(second, "vault"))
                .execute(), "NT-4: pod " + namespace + "/web-r is on node node-b");
    }

    static void assertDenied(org.assertj.core.api.ThrowableAssert.ThrowingCallable call, String message) {
        assertThatThrownBy(call).isInstanceOfSatisfying(ApiException.class, e -> {
            assertThat(e.getCode()).isEqualTo(403);
            assertThat(e.getResponseBody()).contains(message);
        });
    }

    /** The agent, acting with a token bound to its pod agent-a on node-a, as the kubelet projects it. */
    static synchronized CoreV1Api agent() throws Exception {
        if (agentApi == null) {
            admin.createNamespace(new V1Namespace().metadata(new V1ObjectMeta().name(AGENT_NAMESPACE))).execute();
            server.createServiceAccount(AGENT_NAMESPACE, AGENT);
            webhook.allowAgentTokenRequests();
            V1Pod agentPod = admin.createNamespacedPod(AGENT_NAMESPACE, onNode(pod("agent-a", null), "node-a", AGENT))
                    .execute();
            server.createServiceAccount(namespace, "web");
            String agentToken = admin.createNamespacedServiceAccountToken(AGENT, AGENT_NAMESPACE,
                    boundTo(agentPod, KubeApiServer.ISSUER)).execute().getStatus().getToken();
            agentApi = new CoreV1Api(server.clientFor(agentToken));
        }
        return agentApi;
    }

    // --- helpers ---------------------------------------------------------------------------------

    public static V1Pod pod(String name, Map<String, String> annotations) {
        // client-java sends "overhead": {} unless told not to; the API server refuses that without a RuntimeClass
        return new V1Pod().metadata(new V1ObjectMeta().name(name).annotations(annotations))
                .spec(new V1PodSpec().overhead(null).containers(List.of(new V1Container().name("app").image("busybox"))));
    }

    /** A namespace enforcing the restricted Pod Security level, with its default ServiceAccount. */
    static String restrictedNamespace() throws ApiException {
        String name = admin.createNamespace(new V1Namespace().metadata(new V1ObjectMeta().generateName("restricted-")
                .labels(Map.of("pod-security.kubernetes.io/enforce", "restricted")))).execute().getMetadata().getName();
        server.createServiceAccount(name, "default");
        return name;
    }

    /** {@code pod} made to meet the restricted level: non-root, RuntimeDefault seccomp, no capabilities. */
    static V1Pod restrictedPod(V1Pod pod) {
        pod.getSpec().securityContext(new V1PodSecurityContext().runAsNonRoot(true).runAsUser(1000L)
                .seccompProfile(new V1SeccompProfile().type("RuntimeDefault")));
        pod.getSpec().getContainers().forEach(c -> c.securityContext(new V1SecurityContext()
                .allowPrivilegeEscalation(false).capabilities(new V1Capabilities().drop(List.of("ALL")))));
        return pod;
    }

    static V1Pod onNode(V1Pod pod, String node, String serviceAccount) {
        pod.getSpec().nodeName(node).serviceAccountName(serviceAccount);
        return pod;
    }

    /** {@code pod} with an agent volume asking for one token of {@code audience} (none: null) for 3600 s. */
    static V1Pod asking(V1Pod pod, String audience) {
        pod.getSpec().addVolumesItem(new V1Volume().name("tokens").csi(new V1CSIVolumeSource()
                .driver("tokens.satoken.io").readOnly(true)
                .volumeAttributes(audience == null ? Map.of() : Map.of("audience", audience))));
        return pod;
    }

    /** A request as the agent sends it (PV-14): {@code audience} null means none. */
    static AuthenticationV1TokenRequest boundTo(V1Pod pod, String audience) {
        return new AuthenticationV1TokenRequest().spec(new V1TokenRequestSpec().expirationSeconds(3600L)
                .audiences(audience == null ? null : List.of(audience))
                .boundObjectRef(new V1BoundObjectReference().kind("Pod").apiVersion("v1")
                        .name(pod.getMetadata().getName()).uid(pod.getMetadata().getUid())));
    }

    /** What the agent's ClusterRole grants: creating tokens for any ServiceAccount. */
}
