package io.satoken.controlplane.webhook;

import io.satoken.controlplane.admission.NodeTokenRestriction;
import static org.assertj.core.api.Assertions.assertThat;

import io.kubernetes.client.openapi.ApiClient;
import io.kubernetes.client.openapi.apis.AppsV1Api;
import io.kubernetes.client.openapi.apis.CoreV1Api;
import io.kubernetes.client.openapi.models.V1DaemonSet;
import io.kubernetes.client.openapi.models.V1Namespace;
import io.kubernetes.client.openapi.models.V1ObjectMeta;
import io.kubernetes.client.util.Yaml;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.satoken.common.testing.KubeApiServer;
import io.satoken.common.testing.Manifests;
import io.satoken.common.testing.RequiresKubeApiServer;
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
import java.util.Set;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The start-up check of {@code --agent-service-account} against a real kube-apiserver, reading as the webhook's own
 * ServiceAccount with {@code controlplane/deploy/10-rbac.yaml}'s RBAC (so a missing grant fails here), the agent's
 * DaemonSet from {@code agent/deploy/30-daemonset.yaml} moved into another namespace, as a kustomize
 * {@code namespace:} would: a webhook still confining {@code satoken-system/satoken-agent} reports the mismatch and
 * its {@code /readyz} fails; one confining the moved account is confirmed and ready.
 */
@RequiresKubeApiServer
class AgentAccountCheckIT {

    static final Path CONTROLPLANE = Path.of("deploy");
    static final Path AGENT = Path.of("..", "agent", "deploy");
    static final String MOVED = "other-ns";

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
    void agentMovedToAnotherNamespace_webhookStillConfiningTheOldAccount_mismatch_andReadyzFails() throws Exception {
        AgentAccountCheck before = check("satoken-system/satoken-agent");
        assertThat(before.run()).as("no agent installed yet: %s", before.reason())
                .isEqualTo(AgentAccountCheck.State.NO_AGENT);
        assertThat(before.allowsReady()).isTrue();

        installMovedAgent();

        AgentAccountCheck stale = check("satoken-system/satoken-agent");
        assertThat(stale.run()).isEqualTo(AgentAccountCheck.State.MISMATCH);
        assertThat(stale.allowsReady()).isFalse();
        assertThat(stale.reason()).contains("--agent-service-account is satoken-system/satoken-agent",
                "DaemonSet " + MOVED + "/satoken-agent runs as " + MOVED + "/satoken-agent", "would not be confined");
        AgentAccountCheck followed = check(MOVED + "/satoken-agent");
        assertThat(followed.run()).as(followed.reason()).isEqualTo(AgentAccountCheck.State.CONFIRMED);
        assertThat(followed.allowsReady()).isTrue();

        // the process as the Deployment runs it: /readyz fails, naming the webhook's check, and the gauge says why
        Path dir = Files.createTempDirectory(server.workDir(), "agent-check");
        TestCertificates.Pair pair = TestCertificates.write(dir, "satoken-webhook");
        ApiClient watchClient = server.clientFor(server.serviceAccountToken("satoken-webhook", "satoken-webhook"));
        watchClient.setReadTimeout(0);
        ControlplaneRuntime runtime = ControlplaneIT.runInBackground(new ControlplaneRuntime(
                new ControlplaneRuntime.Settings(Set.of(), null, new byte[0], false, 1,
                        new InetSocketAddress("127.0.0.1", 0), null,
                        new AdmissionWebhook.Settings(new InetSocketAddress("127.0.0.1", 0),
                                ServingCertificate.load(pair.cert(), pair.key()), false, "satoken-system/satoken-agent",
                                WebhookServer.Limits.defaults(), Set.of("serviceaccount-token"),
                                List.of(KubeApiServer.ISSUER))),
                asWebhook, watchClient));
        try {
            runtime.startServing();
            HttpClient http = HttpClient.newHttpClient();
            URI readyz = URI.create("http://127.0.0.1:" + runtime.healthAddress().getPort() + "/readyz?verbose");
            Awaitility.await("the check has run").atMost(Duration.ofSeconds(30)).until(() -> runtime.registry()
                    .get("satoken_webhook_agent_account").tag("state", "mismatch").gauge().value() == 1.0);
            HttpResponse<String> answer = http.send(HttpRequest.newBuilder(readyz).build(),
                    HttpResponse.BodyHandlers.ofString());
            assertThat(answer.statusCode()).as("/readyz: %s", answer.body()).isNotEqualTo(200);
            assertThat(answer.body()).contains("webhook");
        } finally {
            runtime.close();
        }
    }

    private static AgentAccountCheck check(String account) {
        return new AgentAccountCheck(NodeTokenRestriction.AgentAccount.parse("--agent-service-account", account),
                AdmissionWebhook.liveCluster(asWebhook), new SimpleMeterRegistry());
    }

    /** The agent's ServiceAccount and DaemonSet as shipped, in {@value #MOVED}. */
    private static void installMovedAgent() throws Exception {
        ApiClient admin = server.adminClient();
        new CoreV1Api(admin).createNamespace(new V1Namespace().metadata(new V1ObjectMeta().name(MOVED))).execute();
        io.kubernetes.client.openapi.models.V1ServiceAccount account =
                (io.kubernetes.client.openapi.models.V1ServiceAccount) Yaml.loadAll(
                        AGENT.resolve("identity/serviceaccount.yaml").toFile()).get(0);
        account.getMetadata().namespace(MOVED);
        new CoreV1Api(admin).createNamespacedServiceAccount(MOVED, account).execute();
        V1DaemonSet ds = (V1DaemonSet) Yaml.loadAll(AGENT.resolve("30-daemonset.yaml").toFile()).get(0);
        ds.getMetadata().namespace(MOVED);
        new AppsV1Api(admin).createNamespacedDaemonSet(MOVED, ds).execute();
    }
}
