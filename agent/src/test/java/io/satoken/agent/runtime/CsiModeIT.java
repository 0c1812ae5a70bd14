package io.satoken.agent.runtime;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.kubernetes.client.openapi.apis.AuthenticationV1Api;
import io.kubernetes.client.openapi.apis.CoreV1Api;
import io.kubernetes.client.openapi.models.V1CSIVolumeSource;
import io.kubernetes.client.openapi.models.V1Container;
import io.kubernetes.client.openapi.models.V1ObjectMeta;
import io.kubernetes.client.openapi.models.V1Pod;
import io.kubernetes.client.openapi.models.V1PodSecurityContext;
import io.kubernetes.client.openapi.models.V1PodSpec;
import io.kubernetes.client.openapi.models.V1TokenReview;
import io.kubernetes.client.openapi.models.V1TokenReviewSpec;
import io.kubernetes.client.openapi.models.V1TokenReviewStatus;
import io.kubernetes.client.openapi.models.V1Volume;
import io.satoken.agent.csi.CsiServer;
import io.satoken.agent.csi.TmpfsMounter;
import io.satoken.agent.csi.wire.InfoRequest;
import io.satoken.agent.csi.wire.NodeGrpc;
import io.satoken.agent.csi.wire.PluginInfo;
import io.satoken.agent.csi.wire.RegistrationGrpc;
import io.satoken.agent.csi.wire.RegistrationStatus;
import io.satoken.common.kube.RateLimiter;
import io.satoken.agent.config.AgentConfigParser;
import io.satoken.agent.projection.PodIdentity;
import io.satoken.agent.testing.CsiClient;
import io.satoken.agent.testing.PodInfo;
import io.satoken.agent.token.TokenInfo;
import io.satoken.agent.token.TokenRequestSource;
import io.satoken.common.testing.KubeApiServer;
import io.satoken.common.testing.RequiresKubeApiServer;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The agent in CSI mode against a real kube-apiserver, with the RBAC of {@code agent/deploy/10-rbac.yaml},
 * real tmpfs mounts and its real unix sockets. The test is the kubelet: it registers the driver and
 * publishes and unpublishes volumes for pods that exist in the API server. Mounting needs root; without it
 * the class is skipped, loudly.
 */
@RequiresKubeApiServer
class CsiModeIT {
    private static final String NODE = "node-csi";

    private static KubeApiServer server;
    private static String namespace;
    private static String agentToken;

    @TempDir
    Path kubeletDir;

    private AgentRuntime agent;
    private CsiClient registration;
    private CsiClient csi;

    @BeforeAll
    static void needsMounting(KubeApiServer shared, @TempDir Path probe) throws Exception {
        String whyNot = whyMountingFails(probe);
        assumeTrue(whyNot == null, () -> {
            String message = "*** SKIPPED CsiModeIT (real CSI publishing): " + whyNot + " ***";
            System.err.println(message);
            return message;
        });
        server = shared;
        namespace = server.createNamespace("csimode");
        server.createServiceAccount(namespace, "app");
        agentToken = AgentRbac.token(server);
    }

    @BeforeEach
    void startAgent() throws Exception {
        agent = start();
        registration = new CsiClient(kubeletDir.resolve("plugins_registry/tokens.satoken.io-reg.sock"));
        csi = new CsiClient(CsiServer.socketPath(kubeletDir));
    }

    @AfterEach
    void stopAgentAndUnmount() throws Exception {
        for (AutoCloseable c : new AutoCloseable[] {csi, registration, agent}) {
            if (c != null) {
                c.close();
            }
        }
        // a tmpfs left mounted would keep the @TempDir from being removed, and outlive the test
        for (String point : mountPointsUnder(kubeletDir)) {
            run("umount", point);
        }
    }

    @Test
    void registration_pointsTheKubeletAtTheCsiSocket_andMakesTheAgentReady() throws Exception {
        assertThat(readyz()).as("ready before the kubelet registered the driver?").isEqualTo(503);

        PluginInfo info = registration.call(RegistrationGrpc.getGetInfoMethod(), InfoRequest.getDefaultInstance());
        assertThat(info.getType()).isEqualTo("CSIPlugin");
        assertThat(info.getName()).isEqualTo("tokens.satoken.io");
        assertThat(info.getEndpoint()).isEqualTo(kubeletDir.resolve("plugins/tokens.satoken.io/csi.sock").toString());
        assertThat(info.getSupportedVersionsList()).containsExactly("1.0.0");

        registration.call(RegistrationGrpc.getNotifyRegistrationStatusMethod(),
                RegistrationStatus.newBuilder().setPluginRegistered(true).build());
        assertThat(readyz()).isEqualTo(200);
    }

    @Test
    void publish_realPod_writesATokenTheApiServerAcceptsBoundToThePod_andUnpublishUnmounts() throws Exception {
        V1Pod pod = createPod("web");
        PodIdentity identity = identityOf(pod);
        Path target = target(identity, "vault");

        csi.call(NodeGrpc.getNodePublishVolumeMethod(), CsiClient.publishRequest("csi-web-vault", target,
                PodInfo.attributes(identity, "audience", "vault", "path", "vault/token")));

        assertThat(new TmpfsMounter().isMounted(target)).as("a tmpfs of ours at the target").isTrue();
        assertThat(mountOptions(target)).contains("nosuid", "nodev", "noexec");
        Path file = target.resolve("vault/token");
        String token = Files.readString(file).strip();
        V1TokenReviewStatus review = new AuthenticationV1Api(server.adminClient()).createTokenReview(
                new V1TokenReview().spec(new V1TokenReviewSpec().token(token).audiences(List.of("vault"))))
                .execute().getStatus();
        assertThat(review.getAuthenticated()).isTrue();
        assertThat(review.getAudiences()).containsExactly("vault");
        assertThat(review.getUser().getUsername()).isEqualTo("system:serviceaccount:" + namespace + ":app");
        assertThat(review.getUser().getExtra())
                .containsEntry("authentication.kubernetes.io/pod-name", List.of("web"))
                .containsEntry("authentication.kubernetes.io/pod-uid", List.of(identity.uid()));
        assertThat(TokenInfo.parse(token).podUid()).isEqualTo(identity.uid());
        // PV-16, PV-17: runAsUser 1000 and fsGroup 2000 give a 0640 file owned by 1000:2000
        assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(file))).isEqualTo("rw-r-----");
        assertThat(Files.getAttribute(file, "unix:uid")).isEqualTo(1000);
        assertThat(Files.getAttribute(file, "unix:gid")).isEqualTo(2000);
        // finding 5: the tmpfs root and the version dir are fsGroup's, 0751 (they were 0755): the group lists,
        // the owner passes in or out of the group, no one else lists
        Path data = target.resolve(Files.readSymbolicLink(target.resolve("..data")));
        for (Path dir : List.of(target, data, data.resolve("vault"))) {
            assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(dir))).as("%s", dir)
                    .isEqualTo("rwxr-x--x");
            assertThat(Files.getAttribute(dir, "unix:gid")).as("%s", dir).isEqualTo(2000);
        }

        csi.call(NodeGrpc.getNodeUnpublishVolumeMethod(), CsiClient.unpublishRequest("csi-web-vault", target));

        assertThat(new TmpfsMounter().isMounted(target)).isFalse();
        assertThat(target).doesNotExist();
        assertThat(mountPointsUnder(kubeletDir)).isEmpty();
    }

    @Test
    void publish_podUidNotTheApiServers_isRefused_andNothingIsMounted() throws Exception {
        V1Pod pod = createPod("replaced");
        PodIdentity stale = new PodIdentity(namespace, "replaced", "00000000-0000-0000-0000-000000000000", "app");
        Path target = target(stale, "tokens");

        assertThatThrownBy(() -> csi.call(NodeGrpc.getNodePublishVolumeMethod(), CsiClient.publishRequest("csi-replaced",
                target, PodInfo.attributes(stale, "audience", "vault"))))
                .isInstanceOfSatisfying(StatusRuntimeException.class, e -> {
                    assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.FAILED_PRECONDITION);
                    assertThat(e.getStatus().getDescription()).contains("now has uid " + pod.getMetadata().getUid());
                });
        assertThat(mountPointsUnder(kubeletDir)).isEmpty();
    }

    @Test
    void restart_resumesAPublishedVolume_withoutATokenRequest() throws Exception {
        PodIdentity identity = identityOf(createPod("steady"));
        Path target = target(identity, "tokens");
        csi.call(NodeGrpc.getNodePublishVolumeMethod(), CsiClient.publishRequest("csi-steady", target,
                PodInfo.attributes(identity, "audience", "vault")));
        String before = Files.readString(target.resolve("token"));

        csi.close();
        agent.close(); // the tmpfs stays, as it does when the agent's pod is restarted
        agent = start();
        csi = new CsiClient(CsiServer.socketPath(kubeletDir));

        await().atMost(Duration.ofSeconds(30)).until(() -> agent.metrics().registry().scrape()
                .contains("satoken_projections{state=\"ready\"} 1.0"));
        // every result is served from the start, at 0
        assertThat(agent.metrics().registry().scrape()).contains("satoken_token_requests_total{result=\"success\"} 0.0",
                "satoken_token_requests_total{result=\"retryable\"} 0.0",
                "satoken_token_requests_total{result=\"refused\"} 0.0");
        assertThat(Files.readString(target.resolve("token"))).isEqualTo(before);
        // the kubelet does not publish again; it unpublishes when the pod goes
        csi.call(NodeGrpc.getNodeUnpublishVolumeMethod(), CsiClient.unpublishRequest("csi-steady", target));
        assertThat(mountPointsUnder(kubeletDir)).isEmpty();
    }

    private AgentRuntime start() throws Exception {
        String yaml = "mode: csi\nkubeletDir: " + kubeletDir + "\n";
        Path configFile = Files.writeString(kubeletDir.resolve("agent.yaml"), yaml);
        AgentRuntime runtime = new AgentRuntime(new AgentRuntime.Settings(AgentConfigParser.parse(yaml), configFile,
                yaml.getBytes(StandardCharsets.UTF_8), NODE, new InetSocketAddress("127.0.0.1", 0),
                Optional.of(List.of(KubeApiServer.ISSUER)), "it"),
                new TokenRequestSource(server.clientFor(agentToken), RateLimiter.defaults()),
                server.clientFor(agentToken));
        runtime.start();
        return runtime;
    }

    /** Where the kubelet puts a pod's inline CSI volume. */
    private Path target(PodIdentity pod, String volume) {
        return kubeletDir.resolve("pods").resolve(pod.uid()).resolve("volumes/kubernetes.io~csi").resolve(volume)
                .resolve("mount");
    }

    private static PodIdentity identityOf(V1Pod pod) {
        return new PodIdentity(pod.getMetadata().getNamespace(), pod.getMetadata().getName(),
                pod.getMetadata().getUid(), pod.getSpec().getServiceAccountName());
    }

    private static V1Pod createPod(String name) throws Exception {
        V1Pod pod = new V1Pod()
                .metadata(new V1ObjectMeta().name(name))
                // client-java sends "overhead": {} unless told not to; the API server refuses that without a RuntimeClass
                .spec(new V1PodSpec().overhead(null).nodeName(NODE).serviceAccountName("app")
                        .securityContext(new V1PodSecurityContext().runAsUser(1000L).fsGroup(2000L))
                        .addContainersItem(new V1Container().name("app").image("busybox")));
        // the volumes the tests publish: the agent checks that the pod has the one a target path names
        for (String volume : List.of("vault", "tokens")) {
            pod.getSpec().addVolumesItem(new V1Volume().name(volume)
                    .csi(new V1CSIVolumeSource().driver("tokens.satoken.io").readOnly(true)));
        }
        return new CoreV1Api(server.adminClient()).createNamespacedPod(namespace, pod).execute();
    }

    private int readyz() throws Exception {
        URI uri = URI.create("http://127.0.0.1:" + agent.healthAddress().getPort() + "/readyz");
        return HttpClient.newHttpClient().send(HttpRequest.newBuilder(uri).build(),
                HttpResponse.BodyHandlers.discarding()).statusCode();
    }

    /** Mount points at or under {@code dir}, from mountinfo (the temporary paths here need no unescaping). */
    private static List<String> mountPointsUnder(Path dir) throws IOException {
        List<String> points = new ArrayList<>();
        for (String line : Files.readAllLines(Path.of("/proc/self/mountinfo"))) {
            String[] fields = line.split(" ");
            if (fields.length > 4 && (fields[4].equals(dir.toString()) || fields[4].startsWith(dir + "/"))) {
                points.add(fields[4]);
            }
        }
        return points;
    }

    private static List<String> mountOptions(Path target) throws IOException {
        for (String line : Files.readAllLines(Path.of("/proc/self/mountinfo"))) {
            String[] fields = line.split(" ");
            if (fields.length > 5 && fields[4].equals(target.toString())) {
                return List.of(fields[5].split(","));
            }
        }
        return List.of();
    }

    /** Why this process cannot mount a tmpfs (it needs root, CAP_SYS_ADMIN), or null when it can. */
    private static String whyMountingFails(Path dir) {
        if (!"root".equals(System.getProperty("user.name"))) {
            return "mounting a tmpfs needs root; running as " + System.getProperty("user.name");
        }
        TmpfsMounter mounter = new TmpfsMounter();
        try {
            mounter.mountTmpfs(dir);
            mounter.unmount(dir);
            return null;
        } catch (IOException e) {
            return "a test tmpfs could not be mounted: " + e.getMessage();
        }
    }

    private static void run(String... command) throws IOException, InterruptedException {
        Process process = new ProcessBuilder(command).redirectErrorStream(true).start();
        if (!process.waitFor(30, TimeUnit.SECONDS) || process.exitValue() != 0) {
            throw new IOException(String.join(" ", command) + " failed: "
                    + new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8));
        }
    }
}
