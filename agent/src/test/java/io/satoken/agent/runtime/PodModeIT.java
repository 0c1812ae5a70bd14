package io.satoken.agent.runtime;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.kubernetes.client.openapi.ApiClient;
import io.kubernetes.client.openapi.apis.AuthenticationV1Api;
import io.kubernetes.client.openapi.apis.CoreV1Api;
import io.kubernetes.client.openapi.models.CoreV1Event;
import io.kubernetes.client.openapi.models.V1Container;
import io.kubernetes.client.openapi.models.V1ObjectMeta;
import io.kubernetes.client.openapi.models.V1Pod;
import io.kubernetes.client.openapi.models.V1PodSpec;
import io.kubernetes.client.openapi.models.V1TokenReview;
import io.kubernetes.client.openapi.models.V1TokenReviewSpec;
import io.kubernetes.client.openapi.models.V1TokenReviewStatus;
import io.satoken.agent.kube.RateLimiter;
import io.satoken.agent.projection.AgentConfigParser;
import io.satoken.agent.token.TokenRequestSource;
import io.satoken.common.testing.KubeApiServer;
import io.satoken.common.testing.RequiresKubeApiServer;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The agent in pod mode against a real kube-apiserver, running as the {@code satoken-agent}
 * ServiceAccount with exactly the RBAC of {@code agent/deploy/10-rbac.yaml}.
 */
@RequiresKubeApiServer
class PodModeIT {
    private static final String NODE = "node-a";
    private static final Duration WAIT = Duration.ofSeconds(30);

    @TempDir
    static Path root;

    private static KubeApiServer server;
    private static CoreV1Api admin;
    private static String namespace;
    private static AgentRuntime agent;

    @BeforeAll
    static void startAgent(KubeApiServer shared) throws Exception {
        server = shared;
        admin = new CoreV1Api(server.adminClient());
        namespace = server.createNamespace("podmode");
        server.createServiceAccount(namespace, "app");
        String agentToken = AgentRbac.token(server);
        agent = startOn(NODE, agentToken, root);
    }

    @AfterAll
    static void stopAgent() {
        if (agent != null) {
            agent.close();
        }
    }

    @Test
    void podOnThisNode_getsATokenTheApiServerAcceptsForItsAudience_namingThePod() throws Exception {
        V1Pod pod = createPod("web", NODE, "app", "- path: vault/token\n  audience: vault\n");
        Path file = root.resolve("pods").resolve(pod.getMetadata().getUid()).resolve("vault/token");
        await().atMost(WAIT).until(() -> Files.exists(file));

        V1TokenReviewStatus review = new AuthenticationV1Api(server.adminClient()).createTokenReview(
                new V1TokenReview().spec(new V1TokenReviewSpec().token(Files.readString(file).strip())
                        .audiences(List.of("vault")))).execute().getStatus();
        assertThat(review.getAuthenticated()).isTrue();
        assertThat(review.getAudiences()).containsExactly("vault");
        assertThat(review.getUser().getUsername()).isEqualTo("system:serviceaccount:" + namespace + ":app");
        assertThat(review.getUser().getExtra()).containsEntry("authentication.kubernetes.io/pod-name", List.of("web"));
        // PV-16..17 defaults: no fs ids → the annotation's default mode 0644
        assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(file))).isEqualTo("rw-r--r--");
    }

    @Test
    void podOnAnotherNode_getsNothing() throws Exception {
        V1Pod pod = createPod("elsewhere", "node-b", "app", "- path: token\n  audience: vault\n");
        V1Pod marker = createPod("marker", NODE, "app", "- path: token\n  audience: vault\n");
        Path markerFile = root.resolve("pods").resolve(marker.getMetadata().getUid()).resolve("token");
        await().atMost(WAIT).until(() -> Files.exists(markerFile)); // the agent has seen later events
        assertThat(root.resolve("pods").resolve(pod.getMetadata().getUid())).doesNotExist();
    }

    @Test
    void deletedPod_losesItsDirectory() throws Exception {
        V1Pod pod = createPod("short-lived", NODE, "app", "- path: token\n  audience: vault\n");
        Path dir = root.resolve("pods").resolve(pod.getMetadata().getUid());
        await().atMost(WAIT).until(() -> Files.exists(dir.resolve("token")));
        admin.deleteNamespacedPod("short-lived", namespace).gracePeriodSeconds(0).execute();
        await().atMost(WAIT).until(() -> !Files.exists(dir));
    }

    @Test
    void unknownServiceAccount_isATokenRequestFailedWarningEvent() throws Exception {
        createPod("orphan", NODE, "ghost", "- path: token\n  audience: vault\n");
        await().atMost(WAIT).untilAsserted(() -> {
            assertThat(eventsOf("orphan")).anySatisfy(e -> {
                assertThat(e.getType()).isEqualTo("Warning");
                assertThat(e.getReason()).isEqualTo("TokenRequestFailed");
                assertThat(e.getMessage()).contains("\"ghost\" not found").doesNotContain("eyJ");
                assertThat(e.getSource().getComponent()).isEqualTo("satoken-agent");
            });
        });
    }

    @Test
    void invalidAnnotation_isAnInvalidTokenProjectionWarningEvent() throws Exception {
        createPod("bad-annotation", NODE, "app", "- path: ../escape\n");
        await().atMost(WAIT).untilAsserted(() -> {
            assertThat(eventsOf("bad-annotation")).anySatisfy(e -> {
                assertThat(e.getReason()).isEqualTo("InvalidTokenProjection");
                assertThat(e.getMessage()).contains("satoken.io/projections[0].path");
            });
        });
    }

    @Test
    void restart_adoptsTheTokensOnDisk_withoutATokenRequest(@TempDir Path restartRoot) throws Exception {
        String agentToken = AgentRbac.token(server);
        V1Pod pod = createPod("steady", "node-restart", "app", "- path: token\n  audience: vault\n");
        Path file = restartRoot.resolve("pods").resolve(pod.getMetadata().getUid()).resolve("token");
        String first;
        try (AgentRuntime before = startOn("node-restart", agentToken, restartRoot)) {
            await().atMost(WAIT).until(() -> Files.exists(file));
            first = Files.readString(file);
        }
        try (AgentRuntime after = startOn("node-restart", agentToken, restartRoot)) {
            await().atMost(WAIT).until(() -> after.metrics().registry().scrape()
                    .contains("satoken_projections{state=\"ready\"} 1.0"));
            assertThat(after.metrics().registry().scrape()).doesNotContain("satoken_token_requests_total");
            assertThat(Files.readString(file)).isEqualTo(first);
        }
    }

    private static AgentRuntime startOn(String node, String agentToken, Path root) throws Exception {
        String yaml = "mode: pods\nrootDir: " + root + "\n";
        Path configFile = Files.writeString(root.resolve("agent.yaml"), yaml);
        ApiClient watch = server.clientFor(agentToken);
        watch.setReadTimeout(0);
        AgentRuntime runtime = new AgentRuntime(new AgentRuntime.Settings(AgentConfigParser.parse(yaml), configFile,
                yaml.getBytes(StandardCharsets.UTF_8), node, new InetSocketAddress("127.0.0.1", 0),
                Optional.of(List.of(KubeApiServer.ISSUER))),
                new TokenRequestSource(server.clientFor(agentToken), RateLimiter.defaults()), watch);
        runtime.start();
        return runtime;
    }

    private static List<CoreV1Event> eventsOf(String podName) throws Exception {
        return admin.listNamespacedEvent(namespace).fieldSelector("involvedObject.name=" + podName)
                .execute().getItems();
    }

    private static V1Pod createPod(String name, String node, String serviceAccount, String annotation)
            throws Exception {
        V1Pod pod = new V1Pod()
                .metadata(new V1ObjectMeta().name(name).annotations(Map.of("satoken.io/projections", annotation)))
                // client-java sends "overhead": {} unless told not to; the API server refuses that without a RuntimeClass
                .spec(new V1PodSpec().overhead(null).nodeName(node).serviceAccountName(serviceAccount)
                        .addContainersItem(new V1Container().name("app").image("busybox")));
        return admin.createNamespacedPod(namespace, pod).execute();
    }
}
