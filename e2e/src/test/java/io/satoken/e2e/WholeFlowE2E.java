package io.satoken.e2e;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.catchThrowableOfType;
import static org.awaitility.Awaitility.await;

import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.kubernetes.client.openapi.ApiException;
import io.kubernetes.client.openapi.apis.AuthorizationV1Api;
import io.kubernetes.client.openapi.apis.CoreV1Api;
import io.kubernetes.client.openapi.apis.RbacAuthorizationV1Api;
import io.kubernetes.client.openapi.models.AuthenticationV1TokenRequest;
import io.kubernetes.client.openapi.models.V1AggregationRule;
import io.kubernetes.client.openapi.models.V1CSIVolumeSource;
import io.kubernetes.client.openapi.models.V1BoundObjectReference;
import io.kubernetes.client.openapi.models.V1ClusterRole;
import io.kubernetes.client.openapi.models.V1ConfigMap;
import io.kubernetes.client.openapi.models.V1Container;
import io.kubernetes.client.openapi.models.V1EnvVar;
import io.kubernetes.client.openapi.models.V1LabelSelector;
import io.kubernetes.client.openapi.models.V1ObjectMeta;
import io.kubernetes.client.openapi.models.V1Pod;
import io.kubernetes.client.openapi.models.V1PodSecurityContext;
import io.kubernetes.client.openapi.models.V1PodSpec;
import io.kubernetes.client.openapi.models.V1PolicyRule;
import io.kubernetes.client.openapi.models.V1ResourceAttributes;
import io.kubernetes.client.openapi.models.V1Secret;
import io.kubernetes.client.openapi.models.V1SelfSubjectAccessReview;
import io.kubernetes.client.openapi.models.V1SelfSubjectAccessReviewSpec;
import io.kubernetes.client.openapi.models.V1TokenRequestSpec;
import io.kubernetes.client.openapi.models.V1TokenReviewStatus;
import io.kubernetes.client.openapi.models.V1Volume;
import io.kubernetes.client.openapi.models.V1VolumeMount;
import io.satoken.agent.testing.KubeletCsiClient;
import io.satoken.common.testing.KubeApiServer;
import io.satoken.common.testing.MountTable;
import io.satoken.common.testing.RequiresKubeApiServer;
import io.satoken.controlplane.webhook.TestCertificates;
import io.satoken.controlplane.testing.ApiServerClientCertificate;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFileAttributes;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.KeyPair;
import java.security.KeyPairGenerator;
import java.security.spec.ECGenParameterSpec;
import java.time.Duration;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;

/**
 * The whole system as an operator runs it: a kube-apiserver with its own ServiceAccount admission plugin
 * off and the control plane's signing key among its {@code --service-account-key-file}s;
 * {@code satoken-controlplane} twice, as {@code controlplane/deploy} splits it: the controllers (with the opt-in
 * Component {@code legacy-tokens/}) and, apart, the webhook, each as its own ServiceAccount with {@code controlplane/deploy/10-rbac.yaml}; and
 * {@code satoken-agent} in CSI mode for node-a (as
 * {@code satoken-system/satoken-agent} with {@code agent/deploy/10-rbac.yaml}, its token bound to an agent
 * pod on node-a), each a separate process started from its launcher (the control plane's with its
 * Deployments' args, {@link DeployedControlplane}, and the signing key this test gives the API server); the
 * webhook registered by
 * {@code controlplane/deploy/webhooks/webhook-configurations.yaml} with its caBundle (the service reference
 * replaced by a loopback URL, as there is no cluster network). No kubelet runs: the test is node-a's kubelet
 * on the agent's CSI sockets ({@link KubeletCsiClient}), publishing the volume the webhook injected into a
 * pod as the kubelet would when the pod starts, and unpublishing it when the pod is deleted.
 */
@RequiresKubeApiServer
@RequiresMounts
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class WholeFlowE2E {

    static final String NODE = "node-a";
    static final Duration WAIT = Duration.ofSeconds(60);
    static final int CONFINEMENT_TRIES = 20;

    static KubeApiServer server;
    static SatokenProcess controlplane;
    static SatokenProcess webhook;
    static SatokenProcess agent;
    static CoreV1Api admin;
    static Path work;
    static Path kubeletDir;
    static KubeletCsiClient kubelet;
    static Path rootCa;
    static String agentToken;
    static String namespace;
    static List<String> webhookArgs;
    static String webhookMetrics;

    @BeforeAll
    static void startTheSystem() throws Exception {
        work = Files.createTempDirectory("satoken-e2e-flow-");
        Path signingKey = work.resolve("sa.key");
        Path signingPub = work.resolve("sa.pub");
        writeEcKeyPair(signingKey, signingPub);
        // the webhook Deployment requires the API server's client certificate
        ApiServerClientCertificate clientCertificate = ApiServerClientCertificate.write(work.resolve("client-auth"));
        server = clientCertificate.presentedBy(KubeApiServer.builder()
                .addFlag("--service-account-key-file", signingPub.toString())) // our legacy tokens verify
                .build().start(); // the harness disables the built-in ServiceAccount admission plugin
        admin = new CoreV1Api(server.adminClient());
        rootCa = server.servingCertificate();

        Kubectl kubectl = Kubectl.forAdmin(server);
        // with the opt-in legacy tokens controller: legacyTokenSecret_* checks the token Secrets it fills
        DeployedControlplane.applyNamespacesAndRbac(kubectl, true);
        TestCertificates.Pair tls = TestCertificates.write(work.resolve("webhook-tls"), "satoken-webhook");
        DeployedControlplane.Running running = DeployedControlplane.startAll("flow", server, work,
                DeployedControlplane.mountedFiles(tls, clientCertificate, signingKey), rootCa, Files.readAllBytes(tls.cert()), WAIT, true);
        controlplane = running.controllers().process();
        webhook = running.webhook().process();
        webhookArgs = running.webhook().args();
        webhookMetrics = running.webhook().address("--metrics-address");

        Path agentDeploy = E2E.repo().resolve("agent/deploy");
        kubectl.apply(agentDeploy.resolve("00-namespace.yaml"));
        kubectl.apply(agentDeploy.resolve("identity/serviceaccount.yaml"));
        kubectl.apply(agentDeploy.resolve("10-rbac.yaml"));
        // The DaemonSet's pod on node-a, admitted through our webhook; the agent's token is bound to it,
        // as kubelet binds a projected token, which is what node confinement (NT-1) requires.
        agentToken = AgentIdentity.podBoundToken(server, NODE);
        CsiAgentSetup agentSetup = CsiAgentSetup.withToken(server, work, NODE, agentToken);
        kubeletDir = agentSetup.kubeletDir();
        agent = agentSetup.launch("flow-agent", "127.0.0.1:" + E2E.freePort());
        kubelet = KubeletCsiClient.open(kubeletDir);
        KubeletCsiClient.Registration registration = kubelet.register(agent, WAIT);
        assertThat(registration.nodeId()).as("NodeGetInfo's node id").isEqualTo(NODE);
        agent.awaitReady(WAIT);
    }

    @AfterAll
    static void stopTheSystem() {
        int agentStatus = agent == null ? 0 : agent.stop();
        int webhookStatus = webhook == null ? 0 : webhook.stop();
        int controlplaneStatus = controlplane == null ? 0 : controlplane.stop();
        if (kubelet != null) {
            kubelet.close(); // unmounts the tmpfs the agent leaves for its next start
        }
        E2E.closeKeepingLogs(server, "flow");
        if (work != null && mountsUnder(work) == 0) {
            MemoryDirs.delete(work); // the kubeconfigs hold tokens
        }
        assertThat(agentStatus).as("agent exit status after SIGTERM").isZero();
        assertThat(webhookStatus).as("webhook exit status after SIGTERM").isZero();
        assertThat(controlplaneStatus).as("control plane exit status after SIGTERM").isZero();
    }

    @Test
    @Order(1)
    void newNamespace_getsItsDefaultServiceAccount_andKubeRootCa() throws Exception {
        namespace = server.createNamespace("flow");
        String expectedCa = Files.readString(rootCa);
        await().atMost(WAIT).untilAsserted(() -> {
            assertThat(admin.readNamespacedServiceAccount("default", namespace).execute()).isNotNull();
            V1ConfigMap ca = admin.readNamespacedConfigMap("kube-root-ca.crt", namespace).execute();
            assertThat(ca.getData()).containsOnlyKeys("ca.crt").containsEntry("ca.crt", expectedCa);
        });
    }

    @Test
    @Order(2)
    void annotatedPod_getsTheCsiVolume_whosePublishWritesItsTokenFile_whichTheApiServerAcceptsForItsAudience_namingThePod()
            throws Exception {
        V1Pod reader = annotated("reader", NODE);
        reader.getSpec().securityContext(new V1PodSecurityContext().runAsUser(1000L).runAsGroup(1000L).fsGroup(2000L));
        V1Pod created = admin.createNamespacedPod(namespace, reader).execute();

        // the webhook: the ServiceAccount admission part ...
        V1PodSpec spec = created.getSpec();
        assertThat(spec.getServiceAccountName()).isEqualTo("default");
        V1Volume apiAccess = spec.getVolumes().stream()
                .filter(v -> v.getName().startsWith("kube-api-access-")).findFirst().orElseThrow();
        assertThat(apiAccess.getProjected()).isNotNull();
        // ... and the agent's CSI inline volume, carrying the annotation as it was written
        V1Volume agentVolume = agentVolume(created);
        assertThat(agentVolume.getHostPath()).as("no hostPath").isNull();
        V1CSIVolumeSource csi = agentVolume.getCsi();
        assertThat(csi.getDriver()).isEqualTo(KubeletCsiClient.DRIVER);
        assertThat(csi.getReadOnly()).isTrue();
        assertThat(csi.getVolumeAttributes()).containsExactly(
                Map.entry("projections", created.getMetadata().getAnnotations().get("satoken.io/projections")));
        assertThat(spec.getVolumes()).as("no hostPath volume at all").allMatch(v -> v.getHostPath() == null);
        V1Container c = spec.getContainers().get(0);
        assertThat(c.getVolumeMounts()).extracting(V1VolumeMount::getMountPath)
                .contains("/var/run/secrets/kubernetes.io/serviceaccount", "/var/run/secrets/satoken");
        V1VolumeMount tokens = c.getVolumeMounts().stream()
                .filter(m -> m.getName().equals("satoken-agent-tokens")).findFirst().orElseThrow();
        assertThat(tokens.getReadOnly()).isTrue();
        assertThat(tokens.getSubPathExpr()).isNull();
        assertThat(tokens.getSubPath()).isNull();
        assertThat(c.getEnv() == null ? List.<V1EnvVar>of() : c.getEnv()).extracting(V1EnvVar::getName)
                .doesNotContain("POD_UID");

        // the kubelet publishes it: the agent mounts a tmpfs there and answers once the file is written, with
        // kubelet's modes for an fsUser and fsGroup
        String uid = created.getMetadata().getUid();
        Path target = kubelet.publish(created, agentVolume);
        assertThat(target).isEqualTo(kubeletDir.resolve("pods").resolve(uid)
                .resolve("volumes/kubernetes.io~csi/satoken-agent-tokens/mount"));
        MountTable.Mount mount = MountTable.at(target);
        assertThat(mount).as("a mount at %s", target).isNotNull();
        assertThat(mount.type()).isEqualTo("tmpfs");
        assertThat(mount.source()).isEqualTo(KubeletCsiClient.DRIVER);
        Path file = target.resolve("vault/token");
        assertThat(file).isRegularFile();
        PosixFileAttributes attrs = Files.readAttributes(file, PosixFileAttributes.class);
        assertThat(PosixFilePermissions.toString(attrs.permissions())).isEqualTo("rw-r-----");
        assertThat(Files.getAttribute(file, "unix:uid")).isEqualTo(1000);
        assertThat(Files.getAttribute(file, "unix:gid")).isEqualTo(2000);
        // every directory of the layout 0751 in fsGroup 2000 (not AW-1's 0755: the group lists, the owner passes
        // as others too, no one else lists), every file the token's own mode;
        // nothing else in it
        try (Stream<Path> all = Files.walk(target)) {
            for (Path p : all.toList()) {
                if (Files.isSymbolicLink(p)) {
                    continue;
                }
                String mode = PosixFilePermissions.toString(Files.getPosixFilePermissions(p));
                assertThat(mode).as("mode of %s", target.relativize(p))
                        .isEqualTo(Files.isDirectory(p) ? "rwxr-x--x" : "rw-r-----");
                if (Files.isDirectory(p)) {
                    assertThat(Files.getAttribute(p, "unix:gid")).as("group of %s", target.relativize(p)).isEqualTo(2000);
                }
            }
        }
        assertThat(Files.readSymbolicLink(target.resolve("..data")).toString()).startsWith("..");
        // publishing again, as the kubelet may, answers the same and changes nothing
        String token = IssuedTokens.read(file);
        assertThat(kubelet.publish(created, agentVolume)).isEqualTo(target);
        assertThat(IssuedTokens.read(file)).isEqualTo(token);

        V1TokenReviewStatus review = ApiChecks.review(server, token, "vault");
        assertThat(review.getAuthenticated()).isTrue();
        assertThat(review.getAudiences()).containsExactly("vault");
        assertThat(review.getUser().getUsername()).isEqualTo("system:serviceaccount:" + namespace + ":default");
        assertThat(review.getUser().getExtra()).containsEntry("authentication.kubernetes.io/pod-name", List.of("reader"))
                .containsEntry("authentication.kubernetes.io/pod-uid", List.of(uid));
        assertThat(ApiChecks.review(server, token, "another-audience").getAuthenticated())
                .as("the token is scoped to its audience").isNotEqualTo(Boolean.TRUE);

        // deleting the pod: the kubelet unpublishes, and the agent unmounts the tmpfs and removes the directory
        admin.deleteNamespacedPod("reader", namespace).gracePeriodSeconds(0).execute();
        kubelet.unpublish(created, "satoken-agent-tokens");
        assertThat(MountTable.at(target)).as("the tmpfs after unpublish").isNull();
        assertThat(target).as("the target directory after unpublish").doesNotExist();
        assertThat(agentVolumeRecords()).as("the agent's volume records after unpublish").isEmpty();
        kubelet.unpublish(created, "satoken-agent-tokens"); // the kubelet retries; a second answer is OK too
    }

    @Test
    @Order(3)
    void agentIdentity_isConfinedToItsNode() throws Exception {
        V1Pod elsewhere = admin.createNamespacedPod(namespace, annotated("elsewhere", "node-b")).execute();
        V1Pod here = admin.createNamespacedPod(namespace, annotated("here", NODE)).execute();
        CoreV1Api asAgent = new CoreV1Api(server.clientFor(agentToken));

        int denied = 0;
        for (int i = 0; i < CONFINEMENT_TRIES; i++) {
            try {
                IssuedTokens.record(asAgent.createNamespacedServiceAccountToken("default", namespace, boundTo(elsewhere))
                        .execute().getStatus().getToken());
            } catch (ApiException e) {
                assertThat(e.getCode()).isEqualTo(403);
                assertThat(e.getResponseBody()).contains("node-b").contains(NODE);
                denied++;
            }
        }
        int granted = 0;
        for (int i = 0; i < CONFINEMENT_TRIES; i++) {
            String token = asAgent.createNamespacedServiceAccountToken("default", namespace, boundTo(here)).execute()
                    .getStatus().getToken();
            granted += IssuedTokens.record(token).isBlank() ? 0 : 1;
        }
        // and through the agent itself: a volume of the pod on node-a is published, one of the pod on node-b
        // (which node-a's kubelet would never ask for) is refused by the agent's own check of the pod's
        // spec.nodeName, before any TokenRequest (the webhook would refuse that with 403, as above); nothing mounted
        Path hereToken = kubelet.publish(here, agentVolume(here)).resolve("vault/token");
        IssuedTokens.read(hereToken);
        StatusRuntimeException refused = catchThrowableOfType(StatusRuntimeException.class,
                () -> kubelet.publish(elsewhere, agentVolume(elsewhere)));
        Path elsewhereTarget = kubelet.targetPath(elsewhere, "satoken-agent-tokens");
        Figures.record("node-confinement", String.format("the agent's identity (token bound to its pod on %s):"
                + " %d of %d TokenRequests for a pod on node-b denied with 403 naming both nodes; %d of %d for a pod"
                + " on %s granted; through the agent's CSI socket, the node-a pod's volume published with its token,"
                + " the node-b pod's refused with %s (\"%s\"), nothing mounted", NODE, denied, CONFINEMENT_TRIES,
                granted, CONFINEMENT_TRIES, NODE, refused == null ? "OK" : refused.getStatus().getCode(),
                refused == null ? "" : refused.getStatus().getDescription()));
        assertThat(denied).as("requests for another node's pod denied").isEqualTo(CONFINEMENT_TRIES);
        assertThat(granted).as("requests for its own node's pod granted").isEqualTo(CONFINEMENT_TRIES);
        assertThat(refused).as("publishing the node-b pod's volume through node-a's agent").isNotNull();
        assertThat(refused.getStatus().getCode()).isEqualTo(Status.Code.FAILED_PRECONDITION);
        assertThat(refused.getStatus().getDescription()).contains("node-b (spec.nodeName)").contains(NODE);
        assertThat(MountTable.at(elsewhereTarget)).as("a mount for the node-b pod").isNull();
        assertThat(elsewhereTarget).as("the node-b pod's target, left empty").satisfiesAnyOf(
                t -> assertThat(t).doesNotExist(), t -> assertThat(t).isEmptyDirectory());
    }

    @Test
    @Order(4)
    void legacyTokenSecret_isFilledByTheTokensController_andAuthenticates() throws Exception {
        admin.createNamespacedSecret(namespace, new V1Secret().type("kubernetes.io/service-account-token")
                .metadata(new V1ObjectMeta().name("legacy")
                        .annotations(Map.of("kubernetes.io/service-account.name", "default")))).execute();
        byte[] token = await().atMost(WAIT).until(
                () -> {
                    Map<String, byte[]> data = admin.readNamespacedSecret("legacy", namespace).execute().getData();
                    return data == null ? null : data.get("token");
                }, t -> t != null);
        String legacy = IssuedTokens.record(new String(token, StandardCharsets.UTF_8));

        V1TokenReviewStatus review = ApiChecks.review(server, legacy, null);
        assertThat(review.getAuthenticated()).isTrue();
        assertThat(review.getUser().getUsername()).isEqualTo("system:serviceaccount:" + namespace + ":default");
        // a real call with it: self-subject reviews are open to every authenticated user (401 otherwise)
        V1SelfSubjectAccessReview self = new AuthorizationV1Api(server.clientFor(legacy)).createSelfSubjectAccessReview(
                new V1SelfSubjectAccessReview().spec(new V1SelfSubjectAccessReviewSpec().resourceAttributes(
                        new V1ResourceAttributes().namespace(namespace).verb("get").resource("pods")))).execute();
        assertThat(self.getStatus()).isNotNull();
    }

    @Test
    @Order(5)
    void aggregatedClusterRole_convergesToItsSources() throws Exception {
        RbacAuthorizationV1Api rbac = new RbacAuthorizationV1Api(server.adminClient());
        String label = "e2e.satoken.io/aggregate-to-flow";
        rbac.createClusterRole(new V1ClusterRole().metadata(new V1ObjectMeta().name("e2e-flow-aggregate"))
                .aggregationRule(new V1AggregationRule().clusterRoleSelectors(List.of(
                        new V1LabelSelector().matchLabels(Map.of(label, "true")))))).execute();
        V1PolicyRule readPods = new V1PolicyRule().apiGroups(List.of("")).resources(List.of("pods"))
                .verbs(List.of("get", "list"));
        rbac.createClusterRole(new V1ClusterRole().metadata(new V1ObjectMeta().name("e2e-flow-source")
                .labels(Map.of(label, "true"))).rules(List.of(readPods))).execute();
        await().atMost(WAIT).untilAsserted(() -> assertThat(
                rbac.readClusterRole("e2e-flow-aggregate").execute().getRules()).containsExactly(readPods));

        V1PolicyRule readSecrets = new V1PolicyRule().apiGroups(List.of("")).resources(List.of("secrets"))
                .verbs(List.of("get"));
        V1ClusterRole source = rbac.readClusterRole("e2e-flow-source").execute();
        rbac.replaceClusterRole("e2e-flow-source", source.rules(List.of(readPods, readSecrets))).execute();
        await().atMost(WAIT).untilAsserted(() -> assertThat(
                rbac.readClusterRole("e2e-flow-aggregate").execute().getRules()).containsExactly(readPods, readSecrets));
    }

    @Test
    @Order(6)
    void webhookKilled_podsAreRefusedWhileItIsDown_tokensOnDiskStay_andItsRestartAdmitsThemAgain()
            throws Exception {
        V1Pod before = admin.createNamespacedPod(namespace, annotated("before-crash", NODE)).execute();
        Path token = kubelet.publish(before, agentVolume(before)).resolve("vault/token");
        String onDisk = IssuedTokens.read(token);

        webhook.kill();
        // failurePolicy: Fail, as the built-in plugin it replaces could never be skipped
        assertThatThrownBy(() -> admin.createNamespacedPod(namespace, annotated("while-down", NODE)).execute())
                .isInstanceOfSatisfying(ApiException.class, e -> assertThat(e.getResponseBody())
                        .contains("failed calling webhook").contains("pods.serviceaccount.satoken.io"));
        assertThat(IssuedTokens.read(token)).as("the agent's token file while the webhook is down")
                .isEqualTo(onDisk);
        assertThat(ApiChecks.review(server, onDisk, "vault").getAuthenticated()).isTrue();

        webhook = SatokenProcess.controlplane("flow-webhook-restarted", webhookArgs, webhookMetrics, Map.of());
        webhook.awaitReady(WAIT);
        V1Pod after = admin.createNamespacedPod(namespace, annotated("after-restart", NODE)).execute();
        assertThat(after.getSpec().getVolumes()).extracting(V1Volume::getName).contains("satoken-agent-tokens");
        assertThat(kubelet.publish(after, agentVolume(after)).resolve("vault/token")).isRegularFile();
    }

    // --- helpers ---------------------------------------------------------------------------------

    static V1Pod pod(String name, String node) {
        return new V1Pod().metadata(new V1ObjectMeta().name(name))
                .spec(new V1PodSpec().nodeName(node).overhead(null)
                        .containers(List.of(new V1Container().name("main").image("busybox:1.36"))));
    }

    static V1Pod annotated(String name, String node) {
        V1Pod p = pod(name, node);
        p.getMetadata().annotations(Map.of("satoken.io/projections",
                "- path: vault/token\n  audience: vault\n  expirationSeconds: 3600\n"));
        return p;
    }

    private static int mountsUnder(Path dir) {
        try {
            return MountTable.under(dir).size();
        } catch (IOException e) {
            return -1;
        }
    }

    /** The volume the webhook injected: what node-a's kubelet publishes when the pod starts. */
    private static V1Volume agentVolume(V1Pod pod) {
        return pod.getSpec().getVolumes().stream().filter(v -> v.getName().equals("satoken-agent-tokens"))
                .findFirst().orElseThrow();
    }

    /** The agent's records of the volumes it has published (never a token). */
    private static List<Path> agentVolumeRecords() throws IOException {
        Path dir = kubeletDir.resolve("plugins").resolve(KubeletCsiClient.DRIVER).resolve("volumes");
        try (Stream<Path> files = Files.list(dir)) {
            return files.filter(f -> f.getFileName().toString().endsWith(".json")).toList();
        }
    }

    /** The agent's request for an {@link #annotated} pod: the audience and lifetime its volume asks for (NT-6). */
    private static AuthenticationV1TokenRequest boundTo(V1Pod pod) {
        return new AuthenticationV1TokenRequest().spec(new V1TokenRequestSpec().audiences(List.of("vault"))
                .expirationSeconds(3600L).boundObjectRef(new V1BoundObjectReference().kind("Pod").apiVersion("v1")
                        .name(pod.getMetadata().getName()).uid(pod.getMetadata().getUid())));
    }

    private static void writeEcKeyPair(Path privateKey, Path publicKey) throws Exception {
        KeyPairGenerator gen = KeyPairGenerator.getInstance("EC");
        gen.initialize(new ECGenParameterSpec("secp256r1"));
        KeyPair keys = gen.generateKeyPair();
        Files.writeString(privateKey, pem("PRIVATE KEY", keys.getPrivate().getEncoded()));
        Files.setPosixFilePermissions(privateKey, PosixFilePermissions.fromString("rw-------"));
        Files.writeString(publicKey, pem("PUBLIC KEY", keys.getPublic().getEncoded()));
    }

    private static String pem(String type, byte[] der) {
        return "-----BEGIN " + type + "-----\n"
                + Base64.getMimeEncoder(64, "\n".getBytes(StandardCharsets.US_ASCII)).encodeToString(der)
                + "\n-----END " + type + "-----\n";
    }
}
