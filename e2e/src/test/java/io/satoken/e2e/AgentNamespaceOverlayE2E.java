package io.satoken.e2e;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.kubernetes.client.openapi.ApiException;
import io.kubernetes.client.openapi.apis.AdmissionregistrationV1Api;
import io.kubernetes.client.openapi.apis.CoreV1Api;
import io.kubernetes.client.openapi.apis.VersionApi;
import io.kubernetes.client.openapi.models.AuthenticationV1TokenRequest;
import io.kubernetes.client.openapi.models.V1BoundObjectReference;
import io.kubernetes.client.openapi.models.V1ClusterRoleBinding;
import io.kubernetes.client.openapi.models.V1Container;
import io.kubernetes.client.openapi.models.V1DaemonSet;
import io.kubernetes.client.openapi.models.V1Deployment;
import io.kubernetes.client.openapi.models.V1MatchCondition;
import io.kubernetes.client.openapi.models.V1MutatingWebhookConfiguration;
import io.kubernetes.client.openapi.models.V1ObjectMeta;
import io.kubernetes.client.openapi.models.V1Pod;
import io.kubernetes.client.openapi.models.V1PodSpec;
import io.kubernetes.client.openapi.models.V1ServiceAccount;
import io.kubernetes.client.openapi.models.V1TokenRequestSpec;
import io.kubernetes.client.openapi.models.V1ValidatingWebhookConfiguration;
import io.kubernetes.client.util.Yaml;
import io.satoken.common.testing.KubeApiServer;
import io.satoken.common.testing.RequiresKubeApiServer;
import io.satoken.controlplane.webhook.TestCertificates;
import io.satoken.controlplane.testing.ApiServerClientCertificate;
import io.satoken.controlplane.testing.DeployedManifests;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The agent rendered into another namespace keeps its confinement. An overlay moves {@code agent/deploy} with a
 * kustomize {@code namespace: other-ns} and renders the control plane's two bases beside it with the Component
 * {@code deploy/agent-identity} (docs/install.md, "Another namespace for the agent"). The test renders it with
 * {@code kubectl kustomize}, applies it to a real kube-apiserver with {@code kubectl apply}, and checks what the
 * server stores: the webhook's {@code --agent-service-account} and the token webhook's matchConditions name
 * {@code other-ns} and nothing names {@code satoken-system}. Then it runs the webhook from the rendered Deployment
 * (its args, its ServiceAccount's RBAC) and shows that a TokenRequest by the moved agent for a pod on another node is
 * refused by the webhook, and one for a pod on its own node is granted.
 */
@RequiresKubeApiServer
class AgentNamespaceOverlayE2E {

    private static final String TEST = "AgentNamespaceOverlayE2E";
    private static final String MOVED = "other-ns";
    private static final Duration WAIT = Duration.ofSeconds(60);

    private static KubeApiServer server;
    private static Kubectl kubectl;
    private static Path work;
    private static List<Object> rendered;
    private static String renderedText;
    private static DeployedControlplane.Started webhook;
    private static int serverMinor;

    @BeforeAll
    static void renderAndApply() throws Exception {
        if (!Kubectl.installed()) {
            System.err.println("*** SKIPPED " + TEST + ": kubectl not found on PATH ***");
            Assumptions.abort("kubectl not found on PATH");
        }
        work = Files.createTempDirectory("satoken-agent-namespace-");
        Path overlays = Files.createDirectories(E2E.repo().resolve("e2e/target/agent-namespace-overlays"));
        Path agent = Files.createDirectories(overlays.resolve("agent"));
        Files.writeString(agent.resolve("kustomization.yaml"), """
                apiVersion: kustomize.config.k8s.io/v1beta1
                kind: Kustomization
                resources:
                  - ../../../../agent/deploy
                namespace: %s
                """.formatted(MOVED));
        Path all = Files.createDirectories(overlays.resolve("all"));
        Files.writeString(all.resolve("kustomization.yaml"), """
                apiVersion: kustomize.config.k8s.io/v1beta1
                kind: Kustomization
                resources:
                  - ../agent
                  - ../../../../controlplane/deploy
                  - ../../../../controlplane/deploy/webhooks
                components:
                  - ../../../../deploy/agent-identity
                """);
        Commands.Result render = Commands.run("kubectl-kustomize", List.of("kubectl", "kustomize", all.toString()));
        assertThat(render.exit()).as("kubectl kustomize:%n%s", render.output()).isZero();
        Path renderedFile = Files.writeString(work.resolve("rendered.yaml"), render.output());
        renderedText = render.output();
        rendered = Yaml.loadAll(renderedText);

        ApiServerClientCertificate clientCertificate = ApiServerClientCertificate.write(work.resolve("client-auth"));
        server = clientCertificate.presentedBy(KubeApiServer.builder()).build().start();
        serverMinor = Integer.parseInt(new VersionApi(server.adminClient()).getCode().execute().getMinor()
                .replaceAll("\\D", ""));
        kubectl = Kubectl.forAdmin(server);
        // as docs/install.md applies it: everything but the registrations, then the registrations; before 1.28
        // matchConditions is an unknown field (--validate=warn)
        String validate = serverMinor < 28 ? "--validate=warn" : "--validate=strict";
        for (String selector : List.of("app.kubernetes.io/component!=webhook-registration",
                "app.kubernetes.io/component=webhook-registration")) {
            Commands.Result applied = kubectl.run("apply", "-k", all.toString(), "-l", selector, validate);
            assertThat(applied.exit()).as("kubectl apply -l %s:%n%s", selector, applied.output()).isZero();
        }
        assertThat(Files.readString(renderedFile)).isEqualTo(renderedText);

        // the webhook, from the rendered Deployment, as its own ServiceAccount
        V1Deployment deployment = of(V1Deployment.class).stream()
                .filter(d -> d.getMetadata().getName().equals("satoken-webhook")).findFirst().orElseThrow();
        TestCertificates.Pair tls = TestCertificates.write(Files.createDirectories(work.resolve("tls")),
                "satoken-webhook");
        Map<String, Path> files = Map.of("/etc/satoken/webhook-tls/tls.crt", tls.cert(),
                "/etc/satoken/webhook-tls/tls.key", tls.key(), ApiServerClientCertificate.MOUNTED_CA,
                clientCertificate.ca().cert());
        DeployedControlplane.Workload workload = new DeployedControlplane.Workload(
                deployment.getMetadata().getNamespace(), deployment.getMetadata().getName(),
                deployment.getSpec().getTemplate().getSpec().getServiceAccountName(), DeployedManifests.args(deployment),
                deployment);
        // pods on node-a and node-b before the webhooks answer (no webhook process yet reaches the Services)
        new AdmissionregistrationV1Api(server.adminClient()).deleteMutatingWebhookConfiguration("satoken-controlplane")
                .execute();
        new AdmissionregistrationV1Api(server.adminClient()).deleteValidatingWebhookConfiguration(
                "satoken-controlplane").execute();
        webhook = DeployedControlplane.start(TEST, server, workload, work, files, server.servingCertificate());
        webhook.process().awaitReady(WAIT);
        // the rendered registrations, with the webhook's loopback URL for the Service
        Path webhooks = Files.createDirectories(work.resolve("deploy/webhooks"));
        StringBuilder configurations = new StringBuilder();
        for (Object o : rendered) {
            if (o instanceof V1MutatingWebhookConfiguration || o instanceof V1ValidatingWebhookConfiguration) {
                configurations.append("---\n").append(Yaml.dump(o));
            }
        }
        Files.writeString(webhooks.resolve("webhook-configurations.yaml"), configurations.toString());
        DeployedManifests.registerWebhooks(server.adminClient(), work.resolve("deploy"),
                "https://127.0.0.1:" + webhook.port("--webhook-address"), tls.pem().getBytes(StandardCharsets.US_ASCII));
    }

    @AfterAll
    static void tearDown() throws Exception {
        if (webhook != null) {
            webhook.process().close();
        }
        if (server != null) {
            server.close();
        }
    }

    @Test
    void render_namesTheMovedAgentEverywhere_andNothingNamesTheOldNamespace() throws Exception {
        assertThat(renderedText).doesNotContain("satoken-system");
        V1ServiceAccount account = of(V1ServiceAccount.class).stream()
                .filter(a -> a.getMetadata().getName().equals("satoken-agent")).findFirst().orElseThrow();
        assertThat(account.getMetadata().getNamespace()).isEqualTo(MOVED);
        V1DaemonSet ds = of(V1DaemonSet.class).get(0);
        assertThat(ds.getMetadata().getNamespace()).isEqualTo(MOVED);
        assertThat(ds.getSpec().getTemplate().getSpec().getServiceAccountName()).isEqualTo("satoken-agent");
        V1ClusterRoleBinding binding = of(V1ClusterRoleBinding.class).stream()
                .filter(b -> b.getMetadata().getName().equals("satoken-agent")).findFirst().orElseThrow();
        assertThat(binding.getSubjects()).singleElement().satisfies(s -> assertThat(s.getNamespace()).isEqualTo(MOVED));
    }

    @Test
    void applied_webhookFlagAndMatchConditions_nameTheMovedAgent() throws Exception {
        V1Deployment stored = new io.kubernetes.client.openapi.apis.AppsV1Api(server.adminClient())
                .readNamespacedDeployment("satoken-webhook", "satoken-webhook").execute();
        assertThat(DeployedManifests.args(stored)).contains("--agent-service-account=" + MOVED + "/satoken-agent");
        assertThat(webhook.args()).contains("--agent-service-account=" + MOVED + "/satoken-agent");
        String expected = "request.userInfo.username == 'system:serviceaccount:' + '" + MOVED + "' + ':' + "
                + "'satoken-agent'";
        V1ValidatingWebhookConfiguration renderedToken = of(V1ValidatingWebhookConfiguration.class).get(0);
        assertThat(renderedToken.getWebhooks().get(0).getMatchConditions()).extracting(V1MatchCondition::getExpression)
                .containsExactly(expected);
        List<V1MatchCondition> registered = new AdmissionregistrationV1Api(server.adminClient())
                .readValidatingWebhookConfiguration("satoken-controlplane").execute().getWebhooks().get(0)
                .getMatchConditions();
        if (serverMinor >= 28) {
            assertThat(registered).extracting(V1MatchCondition::getExpression).containsExactly(expected);
        } else {
            // before 1.28 the server drops the field: every token request reaches the webhook
            assertThat(registered).isNullOrEmpty();
        }
        Figures.record(TEST, "agent rendered into " + MOVED + " (kube-apiserver 1." + serverMinor + "): --agent-service-account="
                + MOVED + "/satoken-agent, matchConditions " + (serverMinor >= 28 ? "stored" : "dropped by the server")
                + " naming " + MOVED);
    }

    @Test
    void movedAgent_tokenForAPodOnAnotherNode_refusedByTheWebhook_onItsOwnNode_granted() throws Exception {
        CoreV1Api admin = new CoreV1Api(server.adminClient());
        String app = server.createNamespace("app");
        server.createServiceAccount(app, "default");
        V1Pod agentPod = admin.createNamespacedPod(MOVED, pod("satoken-agent-node-a", "node-a", "satoken-agent"))
                .execute();
        V1Pod here = admin.createNamespacedPod(app, consumer(pod("here", "node-a", "default"))).execute();
        V1Pod there = admin.createNamespacedPod(app, consumer(pod("there", "node-b", "default"))).execute();
        String agentToken = IssuedTokens.record(admin.createNamespacedServiceAccountToken("satoken-agent", MOVED,
                new AuthenticationV1TokenRequest().spec(new V1TokenRequestSpec().expirationSeconds(3600L)
                        .boundObjectRef(bound(agentPod)))).execute().getStatus().getToken());
        CoreV1Api asAgent = new CoreV1Api(server.clientFor(agentToken));

        assertThatThrownBy(() -> request(asAgent, app, there)).isInstanceOfSatisfying(ApiException.class, e -> {
            assertThat(e.getCode()).isEqualTo(403);
            assertThat(e.getResponseBody())
                    .contains("admission webhook \\\"serviceaccount-token.satoken.io\\\" denied the request");
        });
        String granted = request(asAgent, app, here);
        assertThat(granted).isNotBlank();
        IssuedTokens.record(granted);
    }

    private static String request(CoreV1Api api, String namespace, V1Pod pod) throws ApiException {
        return api.createNamespacedServiceAccountToken("default", namespace, new AuthenticationV1TokenRequest()
                .spec(new V1TokenRequestSpec().audiences(List.of("vault")).expirationSeconds(3600L)
                        .boundObjectRef(bound(pod)))).execute()
                .getStatus().getToken();
    }

    private static V1BoundObjectReference bound(V1Pod pod) {
        return new V1BoundObjectReference().kind("Pod").apiVersion("v1").name(pod.getMetadata().getName())
                .uid(pod.getMetadata().getUid());
    }

    /** {@code pod}, asking the agent for a token of audience vault (the webhook adds the agent's volume). */
    private static V1Pod consumer(V1Pod pod) {
        pod.getMetadata().annotations(Map.of("satoken.io/projections",
                "- path: vault/token\n  audience: vault\n  expirationSeconds: 3600\n"));
        return pod;
    }

    private static V1Pod pod(String name, String node, String serviceAccount) {
        return new V1Pod().metadata(new V1ObjectMeta().name(name)).spec(new V1PodSpec().nodeName(node).overhead(null)
                .serviceAccountName(serviceAccount).automountServiceAccountToken(false)
                .containers(List.of(new V1Container().name("main").image("busybox:1.36"))));
    }

    private static <T> List<T> of(Class<T> kind) {
        List<T> found = new ArrayList<>();
        for (Object o : rendered) {
            if (kind.isInstance(o)) {
                found.add(kind.cast(o));
            }
        }
        return found;
    }

}
