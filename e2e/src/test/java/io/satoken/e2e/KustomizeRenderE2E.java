package io.satoken.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import io.kubernetes.client.openapi.models.V1CSIDriver;
import io.kubernetes.client.openapi.models.V1ClusterRole;
import io.kubernetes.client.openapi.models.V1ClusterRoleBinding;
import io.kubernetes.client.openapi.models.V1ConfigMap;
import io.kubernetes.client.openapi.models.V1Container;
import io.kubernetes.client.openapi.models.V1DaemonSet;
import io.kubernetes.client.openapi.models.V1Deployment;
import io.kubernetes.client.openapi.models.V1Namespace;
import io.kubernetes.client.openapi.models.V1PolicyRule;
import io.kubernetes.client.openapi.models.V1PodSpec;
import io.kubernetes.client.openapi.models.V1Probe;
import io.kubernetes.client.openapi.models.V1Secret;
import io.kubernetes.client.openapi.models.V1Toleration;
import io.kubernetes.client.openapi.models.V1Volume;
import io.kubernetes.client.util.Yaml;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Objects;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The kustomize bases as kubectl renders them ({@code kubectl kustomize}, what {@code kubectl apply -k} applies),
 * checked for where the cluster's keys and the privileged agent may run, without an API server: no Secret holds
 * the signing key and no pod mounts it unless the opt-in Component {@code legacy-tokens/} is included, and then
 * only the controllers' pods, pinned to control-plane nodes, mount the node's own key file; the agent tolerates
 * no taint (so stays off control-plane nodes) and serves health and metrics on the node's loopback only.
 * {@code DeployManifestsE2E} dry-runs the same renderings against a real kube-apiserver.
 */
class KustomizeRenderE2E {

    private static final String CONTROL_PLANE = "node-role.kubernetes.io/control-plane";

    @BeforeAll
    static void kubectl() {
        if (!Kubectl.installed()) {
            System.err.println("*** SKIPPED KustomizeRenderE2E: kubectl not found on PATH ***");
            Assumptions.abort("kubectl not found on PATH");
        }
    }

    @Test
    void controlplaneBase_holdsNoSigningKey_noSecret_andRunsNoTokensController() throws Exception {
        List<Object> objects = render(E2E.repo().resolve("controlplane/deploy"));

        assertThat(objects).noneMatch(o -> o instanceof V1Secret);
        assertThat(grantsSecrets(objects)).isFalse();
        for (V1Deployment d : of(objects, V1Deployment.class)) {
            V1PodSpec pod = d.getSpec().getTemplate().getSpec();
            assertThat(hostPaths(pod)).as(d.getMetadata().getName()).isEmpty();
            assertThat(pod.getContainers().get(0).getArgs()).as(d.getMetadata().getName())
                    .noneMatch(a -> a.startsWith("--service-account-private-key-file"))
                    .noneMatch(a -> a.startsWith("--controllers=") && a.contains("tokens"));
        }
    }

    @Test
    void legacyTokensOverlay_mountsTheNodesKeyFile_onlyInTheControllersPods_onControlPlaneNodesOnly() throws Exception {
        Path overlay = Files.createDirectories(E2E.repo().resolve("e2e/target/kustomize-render/legacy-tokens"));
        Files.writeString(overlay.resolve("kustomization.yaml"), """
                apiVersion: kustomize.config.k8s.io/v1beta1
                kind: Kustomization
                resources:
                  - ../../../../controlplane/deploy
                components:
                  - ../../../../controlplane/deploy/legacy-tokens
                """);

        List<Object> objects = render(overlay);

        assertThat(objects).noneMatch(o -> o instanceof V1Secret);
        assertThat(grantsSecrets(objects)).as("the tokens controller's ClusterRole").isTrue();
        for (V1Deployment d : of(objects, V1Deployment.class)) {
            V1PodSpec pod = d.getSpec().getTemplate().getSpec();
            V1Container c = pod.getContainers().get(0);
            if (!d.getMetadata().getName().equals("satoken-controlplane")) {
                assertThat(hostPaths(pod)).as(d.getMetadata().getName()).isEmpty();
                continue;
            }
            assertThat(hostPaths(pod)).containsExactly("/etc/kubernetes/pki/sa.key");
            assertThat(c.getArgs()).contains("--controllers=*,tokens",
                    "--service-account-private-key-file=/etc/satoken/signing-key/sa.key");
            assertThat(c.getVolumeMounts()).filteredOn(m -> m.getName().equals("signing-key"))
                    .singleElement().satisfies(m -> assertThat(m.getReadOnly()).isTrue());
            assertThat(pod.getNodeSelector()).containsEntry(CONTROL_PLANE, "");
            assertThat(c.getSecurityContext().getCapabilities().getDrop()).containsExactly("ALL");
            assertThat(c.getSecurityContext().getAllowPrivilegeEscalation()).isFalse();
        }
        assertThat(of(objects, V1Namespace.class)).filteredOn(n -> n.getMetadata().getName().equals("satoken-controlplane"))
                .singleElement().satisfies(n -> assertThat(n.getMetadata().getLabels())
                        .containsEntry("pod-security.kubernetes.io/enforce", "privileged"));
    }

    @Test
    void kubeletMintedProfile_grantsNoTokenRight_listsTokenRequests_andSaysTokenSourceKubelet() throws Exception {
        List<Object> objects = render(E2E.repo().resolve("deploy/profiles/kubelet-minted"));

        List<V1PolicyRule> rules = of(objects, V1ClusterRole.class).stream()
                .filter(r -> r.getMetadata().getName().equals("satoken-agent")).findFirst().orElseThrow().getRules();
        assertThat(rules).flatExtracting(V1PolicyRule::getResources).containsExactlyInAnyOrder("pods", "events")
                .doesNotContain("serviceaccounts/token", "validatingwebhookconfigurations");
        V1CSIDriver driver = of(objects, V1CSIDriver.class).get(0);
        assertThat(driver.getSpec().getRequiresRepublish()).isTrue();
        assertThat(driver.getSpec().getTokenRequests()).isNotEmpty()
                .allSatisfy(t -> assertThat(t.getExpirationSeconds()).isGreaterThanOrEqualTo(600L));
        assertThat(driver.getSpec().getPodInfoOnMount()).as("the pod information the tokens are checked against")
                .isTrue();
        assertThat(of(objects, V1ConfigMap.class).get(0).getData().get("agent.yaml")).contains("tokenSource: kubelet");

        // 1.35+: the Component (client-java's models do not know the field, so it is read as text)
        Path overlay = Files.createDirectories(E2E.repo().resolve("e2e/target/kustomize-render/tokens-in-secrets"));
        Files.writeString(overlay.resolve("kustomization.yaml"), """
                apiVersion: kustomize.config.k8s.io/v1beta1
                kind: Kustomization
                resources:
                  - ../../../../deploy/profiles/kubelet-minted
                components:
                  - ../../../../agent/deploy/components/tokens-in-secrets
                """);
        Commands.Result r = Commands.run("kubectl-kustomize", List.of("kubectl", "kustomize", overlay.toString()));
        assertThat(r.exit()).as(r.output()).isZero();
        assertThat(r.output()).contains("serviceAccountTokenInSecrets: true");
    }

    @Test
    void agentBase_toleratesNoTaint_andServesHealthAndMetricsOnTheNodesLoopbackOnly() throws Exception {
        V1DaemonSet ds = of(render(E2E.repo().resolve("agent/deploy")), V1DaemonSet.class).get(0);
        V1PodSpec pod = ds.getSpec().getTemplate().getSpec();
        V1Container agent = pod.getContainers().get(0);

        assertThat(Objects.requireNonNullElse(pod.getTolerations(), List.<V1Toleration>of())).isEmpty();
        assertThat(pod.getHostNetwork()).isTrue();
        List<String> command = agent.getCommand();
        assertThat(command.get(command.indexOf("--metrics-address") + 1)).startsWith("127.0.0.1:");
        assertThat(agent.getPorts()).isNullOrEmpty();
        for (V1Probe probe : List.of(agent.getStartupProbe(), agent.getLivenessProbe(), agent.getReadinessProbe())) {
            assertThat(probe.getHttpGet().getHost()).isEqualTo("127.0.0.1");
        }
        assertThat(pod.getAutomountServiceAccountToken()).isFalse();
        assertThat(pod.getVolumes()).filteredOn(v -> v.getProjected() != null)
                .flatExtracting(v -> v.getProjected().getSources())
                .filteredOn(s -> s.getServiceAccountToken() != null)
                .singleElement().satisfies(s -> assertThat(s.getServiceAccountToken().getExpirationSeconds())
                        .isEqualTo(3600L));
    }

    /**
     * The node-impersonation profile: the agent may act as its own node and, as it, create TokenRequests and
     * SelfSubjectReviews; it holds no right to mint a token as itself nor to read the webhook's registration, and its
     * config asks for node impersonation. The nodes' audience grant lists audiences, never every one ("*").
     */
    @Test
    void nodeImpersonationProfile_agentMintsOnlyAsItsNode_andTheNodesGetAnExplicitAudienceList() throws Exception {
        List<Object> objects = render(E2E.repo().resolve("deploy/profiles/node-impersonation"));
        List<V1ClusterRole> roles = of(objects, V1ClusterRole.class);
        List<V1PolicyRule> agent = roles.stream().filter(r -> r.getMetadata().getName().equals("satoken-agent"))
                .findFirst().orElseThrow().getRules();
        List<String> grants = agent.stream().flatMap(rule -> rule.getResources().stream().flatMap(resource ->
                rule.getVerbs().stream().map(verb -> rule.getApiGroups().get(0) + "/" + resource + ":" + verb))).toList();

        assertThat(grants).containsExactlyInAnyOrder("/pods:get", "/events:create", "/events:patch",
                "authentication.k8s.io/nodes:impersonate:associated-node",
                "/serviceaccounts/token:impersonate-on:associated-node:create",
                "authentication.k8s.io/selfsubjectreviews:impersonate-on:associated-node:create");
        assertThat(agent).allMatch(rule -> rule.getResourceNames() == null || rule.getResourceNames().isEmpty());
        V1ClusterRole audiences = roles.stream()
                .filter(r -> r.getMetadata().getName().equals("satoken-node-token-audiences")).findFirst().orElseThrow();
        assertThat(audiences.getRules()).singleElement().satisfies(rule -> {
            assertThat(rule.getApiGroups()).containsExactly("");
            assertThat(rule.getVerbs()).containsExactly("request-serviceaccounts-token-audience");
            assertThat(rule.getResources()).isNotEmpty().doesNotContain("*");
        });
        assertThat(of(objects, V1ClusterRoleBinding.class))
                .filteredOn(b -> b.getRoleRef().getName().equals("satoken-node-token-audiences"))
                .singleElement().satisfies(b -> assertThat(b.getSubjects()).singleElement()
                        .satisfies(s -> assertThat(s.getKind() + "/" + s.getName()).isEqualTo("Group/system:nodes")));
        V1ConfigMap config = of(objects, V1ConfigMap.class).get(0);
        assertThat(config.getData().get("agent.yaml")).contains("tokenSource: node-impersonation");
        // the agent's credential is still the pod's own projected token, which carries the node claim
        V1PodSpec pod = of(objects, V1DaemonSet.class).get(0).getSpec().getTemplate().getSpec();
        assertThat(pod.getVolumes()).filteredOn(v -> v.getProjected() != null)
                .flatExtracting(v -> v.getProjected().getSources())
                .filteredOn(s -> s.getServiceAccountToken() != null).hasSize(1);
    }

    private static List<Object> render(Path dir) throws IOException, InterruptedException {
        Commands.Result r = Commands.run("kubectl-kustomize", List.of("kubectl", "kustomize", dir.toString()));
        assertThat(r.exit()).as("kubectl kustomize %s:%n%s", dir, r.output()).isZero();
        return Yaml.loadAll(r.output());
    }

    private static <T> List<T> of(List<Object> objects, Class<T> kind) {
        return objects.stream().filter(kind::isInstance).map(kind::cast).toList();
    }

    private static List<String> hostPaths(V1PodSpec pod) {
        return Objects.requireNonNullElse(pod.getVolumes(), List.<V1Volume>of()).stream()
                .filter(v -> v.getHostPath() != null).map(v -> v.getHostPath().getPath()).toList();
    }

    private static boolean grantsSecrets(List<Object> objects) {
        return of(objects, V1ClusterRole.class).stream().flatMap(r -> Objects.requireNonNullElse(r.getRules(),
                List.<V1PolicyRule>of()).stream())
                .anyMatch(rule -> Objects.requireNonNullElse(rule.getResources(), List.<String>of()).contains("secrets"));
    }
}
