package io.satoken.controlplane.webhook;

import io.satoken.controlplane.runtime.AdmissionWebhook;
import io.satoken.controlplane.admission.NodeTokenRestriction;
import static org.assertj.core.api.Assertions.assertThat;

import io.kubernetes.client.openapi.ApiClient;
import io.kubernetes.client.openapi.apis.AppsV1Api;
import io.kubernetes.client.openapi.apis.CoreV1Api;
import io.kubernetes.client.openapi.apis.RbacAuthorizationV1Api;
import io.kubernetes.client.openapi.models.RbacV1Subject;
import io.kubernetes.client.openapi.models.V1DaemonSet;
import io.kubernetes.client.openapi.models.V1Namespace;
import io.kubernetes.client.openapi.models.V1ObjectMeta;
import io.kubernetes.client.openapi.models.V1PolicyRule;
import io.kubernetes.client.openapi.models.V1Role;
import io.kubernetes.client.openapi.models.V1RoleBinding;
import io.kubernetes.client.openapi.models.V1RoleRef;
import io.kubernetes.client.openapi.models.V1ServiceAccount;
import io.kubernetes.client.util.Yaml;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.satoken.common.testing.KubeApiServer;
import io.satoken.common.testing.Manifests;
import io.satoken.common.testing.RequiresKubeApiServer;
import io.satoken.controlplane.https.ServingCertificate;
import io.satoken.controlplane.https.WebhookServer;
import io.satoken.controlplane.runtime.ControlplaneIT;
import io.satoken.controlplane.runtime.ControlplaneRuntime;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The check of {@code --agent-service-account} against a real kube-apiserver, reading as the webhook's own
 * ServiceAccount with {@code controlplane/deploy/10-rbac.yaml}'s RBAC (so a missing grant fails here), and the
 * agent's ServiceAccount and DaemonSet from {@code agent/deploy}: a decoy DaemonSet a tenant creates in its own
 * namespace with the agent's label leaves a freshly started webhook ready (it is counted as a look-alike); a
 * DaemonSet in the agent's own namespace running as another account turns {@code /readyz} unready.
 */
@RequiresKubeApiServer
class AgentAccountCheckIT {

    static final Path CONTROLPLANE = Path.of("deploy");
    static final Path AGENT = Path.of("..", "agent", "deploy");

    static KubeApiServer server;
    static ApiClient asWebhook;

    @BeforeAll
    static void start() throws Exception {
        server = KubeApiServer.create().start();
        Manifests.apply(server, CONTROLPLANE.resolve("00-namespace.yaml"));
        Manifests.apply(server, CONTROLPLANE.resolve("10-rbac.yaml"));
        asWebhook = server.clientFor(server.serviceAccountToken("satoken-webhook", "satoken-webhook"));
    }

    @AfterAll
    static void stop() {
        if (server != null) {
            server.close();
        }
    }

    @Test
    void decoyDaemonSetInATenantNamespace_leavesAFreshlyStartedWebhookReady() throws Exception {
        installAgent("agents", null);
        String tenant = server.createNamespace("tenant");
        ApiClient asTenant = tenantWhoMayCreateDaemonSets(tenant);
        V1DaemonSet decoy = (V1DaemonSet) Yaml.loadAll(AGENT.resolve("30-daemonset.yaml").toFile()).get(0);
        decoy.getMetadata().namespace(tenant).name("decoy");
        decoy.getSpec().getTemplate().getSpec().serviceAccountName("default").nodeSelector(Map.of("none", "none"));
        new AppsV1Api(asTenant).createNamespacedDaemonSet(tenant, decoy).execute();

        ControlplaneRuntime runtime = webhook("agents/satoken-agent");
        try {
            Awaitility.await("the check has run").atMost(Duration.ofSeconds(30)).until(() ->
                    gauge(runtime, "satoken_webhook_agent_lookalike_daemonsets", null) == 1.0);
            assertThat(gauge(runtime, "satoken_webhook_agent_account", "confirmed")).isEqualTo(1.0);
            Awaitility.await("ready").atMost(Duration.ofSeconds(30)).until(() -> readyz(runtime).statusCode() == 200);
        } finally {
            runtime.close();
        }
    }

    @Test
    void daemonSetInTheAgentsNamespace_runningAsAnotherAccount_mismatch_andReadyzFails() throws Exception {
        installAgent("stale", "someone-else");
        AgentAccountCheck check = new AgentAccountCheck(
                NodeTokenRestriction.AgentAccount.parse("--agent-service-account", "stale/satoken-agent"),
                AgentAccountCheck.live(asWebhook), new SimpleMeterRegistry());
        assertThat(check.run()).isEqualTo(AgentAccountCheck.State.MISMATCH);
        assertThat(check.reason()).contains("--agent-service-account is stale/satoken-agent",
                "DaemonSet stale/satoken-agent runs as stale/someone-else", "would not be confined");

        // the process as the Deployment runs it: /readyz fails, naming the webhook's check, and the gauge says why
        ControlplaneRuntime runtime = webhook("stale/satoken-agent");
        try {
            Awaitility.await("the check has run").atMost(Duration.ofSeconds(30)).until(() ->
                    gauge(runtime, "satoken_webhook_agent_account", "mismatch") == 1.0);
            HttpResponse<String> answer = readyz(runtime);
            assertThat(answer.statusCode()).as("/readyz: %s", answer.body()).isNotEqualTo(200);
            assertThat(answer.body()).contains("webhook");
        } finally {
            runtime.close();
        }
    }

    private static ControlplaneRuntime webhook(String agentAccount) throws Exception {
        Path dir = Files.createTempDirectory(server.workDir(), "agent-check");
        TestCertificates.Pair pair = TestCertificates.write(dir, "satoken-webhook");
        ApiClient watchClient = server.clientFor(server.serviceAccountToken("satoken-webhook", "satoken-webhook"));
        watchClient.setReadTimeout(0);
        ControlplaneRuntime runtime = ControlplaneIT.runInBackground(new ControlplaneRuntime(
                new ControlplaneRuntime.Settings(Set.of(), null, new byte[0], false, 1,
                        new InetSocketAddress("127.0.0.1", 0), null,
                        new AdmissionWebhook.Settings(new InetSocketAddress("127.0.0.1", 0),
                                ServingCertificate.load(pair.cert(), pair.key()), false, agentAccount,
                                WebhookServer.Limits.defaults(), Set.of("serviceaccount-token"),
                                List.of(KubeApiServer.ISSUER))),
                asWebhook, watchClient, asWebhook));
        runtime.startServing();
        return runtime;
    }

    private static HttpResponse<String> readyz(ControlplaneRuntime runtime) throws Exception {
        URI readyz = URI.create("http://127.0.0.1:" + runtime.healthAddress().getPort() + "/readyz?verbose");
        return HttpClient.newHttpClient().send(HttpRequest.newBuilder(readyz).build(),
                HttpResponse.BodyHandlers.ofString());
    }

    private static double gauge(ControlplaneRuntime runtime, String name, String state) {
        var search = runtime.registry().find(name);
        if (state != null) {
            search = search.tag("state", state);
        }
        var gauge = search.gauge();
        return gauge == null ? Double.NaN : gauge.value();
    }

    /** A user whose only right is a Role for DaemonSets in its own namespace, as in the security review. */
    private static ApiClient tenantWhoMayCreateDaemonSets(String namespace) throws Exception {
        ApiClient admin = server.adminClient();
        String token = server.serviceAccountToken(namespace, "dev");
        new RbacAuthorizationV1Api(admin).createNamespacedRole(namespace, new V1Role()
                .metadata(new V1ObjectMeta().name("daemonsets"))
                .rules(List.of(new V1PolicyRule().apiGroups(List.of("apps")).resources(List.of("daemonsets"))
                        .verbs(List.of("create", "get", "list"))))).execute();
        new RbacAuthorizationV1Api(admin).createNamespacedRoleBinding(namespace, new V1RoleBinding()
                .metadata(new V1ObjectMeta().name("daemonsets"))
                .roleRef(new V1RoleRef().apiGroup("rbac.authorization.k8s.io").kind("Role").name("daemonsets"))
                .subjects(List.of(new RbacV1Subject().kind("ServiceAccount").name("dev").namespace(namespace))))
                .execute();
        return server.clientFor(token);
    }

    /**
     * The agent's ServiceAccount and DaemonSet as shipped, moved into {@code namespace} as a kustomize
     * {@code namespace:} would; with {@code runAs}, the DaemonSet runs as that account of the namespace instead.
     */
    private static void installAgent(String namespace, String runAs) throws Exception {
        ApiClient admin = server.adminClient();
        new CoreV1Api(admin).createNamespace(new V1Namespace().metadata(new V1ObjectMeta().name(namespace))).execute();
        V1ServiceAccount account = (V1ServiceAccount) Yaml.loadAll(
                AGENT.resolve("identity/serviceaccount.yaml").toFile()).get(0);
        account.getMetadata().namespace(namespace);
        new CoreV1Api(admin).createNamespacedServiceAccount(namespace, account).execute();
        V1DaemonSet ds = (V1DaemonSet) Yaml.loadAll(AGENT.resolve("30-daemonset.yaml").toFile()).get(0);
        ds.getMetadata().namespace(namespace);
        if (runAs != null) {
            server.createServiceAccount(namespace, runAs);
            ds.getSpec().getTemplate().getSpec().serviceAccountName(runAs);
        }
        new AppsV1Api(admin).createNamespacedDaemonSet(namespace, ds).execute();
    }
}
