package io.satoken.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import com.google.gson.GsonBuilder;
import com.google.gson.JsonElement;
import com.google.gson.JsonObject;
import com.google.gson.JsonParser;
import io.kubernetes.client.openapi.apis.AppsV1Api;
import io.kubernetes.client.openapi.apis.CoreV1Api;
import io.kubernetes.client.openapi.models.V1ConfigMap;
import io.kubernetes.client.openapi.models.V1Container;
import io.kubernetes.client.openapi.models.V1DaemonSet;
import io.kubernetes.client.openapi.models.V1Deployment;
import io.kubernetes.client.openapi.models.V1Namespace;
import io.kubernetes.client.openapi.models.V1ObjectMeta;
import io.kubernetes.client.openapi.models.V1Pod;
import io.kubernetes.client.openapi.models.V1PodSpec;
import io.kubernetes.client.openapi.models.V1Secret;
import io.kubernetes.client.openapi.models.V1TokenReviewStatus;
import io.kubernetes.client.openapi.models.V1Volume;
import io.kubernetes.client.util.Yaml;
import io.satoken.common.testing.MountTable;
import io.satoken.controlplane.webhook.TestCertificates;
import io.satoken.controlplane.testing.ApiServerClientCertificate;
import io.satoken.controlplane.testing.DeployedManifests;
import io.satoken.e2e.node.ClusterControllers;
import io.satoken.e2e.node.ExecResult;
import io.satoken.e2e.node.KubeletNode;
import io.satoken.e2e.node.TestImages;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.stream.Stream;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.parallel.Execution;
import org.junit.jupiter.api.parallel.ExecutionMode;
import org.junit.jupiter.api.parallel.ResourceLock;

/**
 * The whole product as an operator runs it: the images that {@code mvn -Pimages package} built, imported
 * into a real node's containerd, and the kustomize bases applied with {@code kubectl apply -k} through a
 * test overlay, in docs/install.md's order: the control plane, then the webhook registrations once the webhook
 * serves, then the agent. Real kube-controller-manager (DaemonSet, Deployment and ReplicaSet controllers
 * only) and kube-scheduler place the pods; satoken's control plane replaces the ServiceAccount controllers
 * and admission.
 *
 * <p>What the overlay changes, and why (everything else is the bases as shipped):
 * <ul>
 *   <li>{@code hostNetwork: true} for the three workloads, {@code KUBERNETES_SERVICE_HOST/PORT} pointing at
 *       the API server on 127.0.0.1, and the two satoken namespaces at the {@code privileged} Pod Security
 *       level (hostNetwork needs it): the test node has no kube-proxy, so neither the {@code kubernetes}
 *       Service nor a pod network route to the API server;
 *   <li>free ports instead of 9810, 10260 and 9443 (the three share the host's network here, and the
 *       machine runs other tests), in the args, the container ports and the probes (the agent's stay on the
 *       node's loopback, as shipped);
 *   <li>one replica of each Deployment (one node; two pods with the same host port cannot share it);
 *   <li>{@code imagePullPolicy: Never}: the images exist only in the node's containerd;
 *   <li>the kubelet's root directory, which is the test node's own rather than {@code /var/lib/kubelet}, in
 *       the agent's config and its three hostPath volumes and mount paths.
 * </ul>
 * The webhooks base is registered with the webhook's loopback URL in place of its Service (no Service
 * routing here), and its caBundle.
 */
@Execution(ExecutionMode.CONCURRENT) // mostly waits for pods; see junit-platform.properties
@ResourceLock(KubeletNode.RESOURCE)
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class ProductPodsE2E {

    private static final String TEST = "ProductPodsE2E";
    private static final String AGENT_NAMESPACE = "satoken-system";
    private static final String CONTROLLERS_NAMESPACE = "satoken-controlplane";
    private static final String WEBHOOK_NAMESPACE = "satoken-webhook";
    private static final String AGENT_USER = "system:serviceaccount:satoken-system:satoken-agent";
    private static final String AUDIENCE = "vault";
    private static final String TOKEN_FILE = "/var/run/secrets/satoken/vault/token";
    private static final Duration ROLLOUT = Duration.ofSeconds(180);
    private static final List<String> IMAGES = List.of("agent/target/satoken-agent-image.tar",
            "controlplane/target/satoken-controlplane-image.tar");

    private static KubeletNode node;
    private static ClusterControllers controllers;
    private static Kubectl kubectl;
    private static Path work;
    private static Path overlays;
    private static Path auditLog;
    private static String consumerNamespace;
    private static V1Pod consumer;
    private static String consumerToken;

    @BeforeAll
    static void deploy() throws Exception {
        KubeletNode.assumeAvailable();
        skipUnless(ClusterControllers.unavailableReason());
        skipUnless(Kubectl.installed() ? Optional.empty() : Optional.of("kubectl not found on PATH"));
        for (String archive : IMAGES) {
            skipUnless(Files.isRegularFile(E2E.repo().resolve(archive)) ? Optional.empty()
                    : Optional.of(archive + " not built (mvn -B -q -DskipTests -Pimages package builds it)"));
        }
        work = Files.createTempDirectory("satoken-product-pods-");
        auditLog = work.resolve("audit.log");
        Path policy = Files.writeString(work.resolve("audit-policy.yaml"), """
                apiVersion: audit.k8s.io/v1
                kind: Policy
                omitStages: [RequestReceived, ResponseStarted]
                rules:
                  - level: Metadata
                    resources:
                      - group: ""
                        resources: ["serviceaccounts/token"]
                  - level: None
                """);
        long started = System.nanoTime();
        // the webhook Deployment requires the API server's client certificate (docs/control-plane.md, "Client certificates")
        ApiServerClientCertificate clientCertificate = ApiServerClientCertificate.write(work.resolve("client-auth"));
        node = KubeletNode.builder().apiServer(b -> clientCertificate.presentedBy(b)
                .flag("--audit-policy-file", policy.toString())
                .flag("--audit-log-path", auditLog.toString())).start();
        for (String archive : IMAGES) {
            node.importImage(E2E.repo().resolve(archive));
        }
        controllers = ClusterControllers.start(node.apiServer(), work);
        kubectl = Kubectl.forAdmin(node.apiServer());
        CoreV1Api core = new CoreV1Api(node.adminClient());
        // the controllers' Deployment runs on control-plane nodes only; this node is one
        kubectl("label", "node", node.nodeName(), "node-role.kubernetes.io/control-plane=");

        // What an operator does first (docs/install.md): the namespaces, while kube-controller-manager
        // still publishes kube-root-ca.crt (here the test does, as none runs), and the webhook's serving
        // certificate. The base runs no tokens controller, so no signing key is needed.
        kubectl("apply", "-f", E2E.repo().resolve("controlplane/deploy/00-namespace.yaml").toString());
        String rootCa = Files.readString(node.apiServer().servingCertificate());
        for (String ns : List.of(CONTROLLERS_NAMESPACE, WEBHOOK_NAMESPACE)) {
            core.createNamespacedConfigMap(ns, new V1ConfigMap().metadata(new V1ObjectMeta().name("kube-root-ca.crt"))
                    .data(Map.of("ca.crt", rootCa))).execute();
        }
        core.createNamespacedConfigMap(WEBHOOK_NAMESPACE, new V1ConfigMap().metadata(new V1ObjectMeta()
                .name("satoken-webhook-client-ca")).data(Map.of("ca.crt", Files.readString(clientCertificate.ca().cert()))))
                .execute();
        TestCertificates.Pair tls = TestCertificates.write(work.resolve("webhook-tls"), "satoken-webhook");
        core.createNamespacedSecret(WEBHOOK_NAMESPACE, new V1Secret().metadata(new V1ObjectMeta()
                .name("satoken-webhook-tls")).type("kubernetes.io/tls")
                .data(Map.of("tls.crt", Files.readAllBytes(tls.cert()), "tls.key", Files.readAllBytes(tls.key()))))
                .execute();

        // the control plane, its rollout, then the webhooks, then the agent
        Ports ports = new Ports(E2E.freePort(), E2E.freePort(), E2E.freePort(), E2E.freePort(),
                Integer.parseInt(node.apiServer().url().replaceAll(".*:", "")));
        overlays = Files.createDirectories(E2E.repo().resolve("e2e/target/product-pods-overlays"));
        Path controlplane = writeOverlay("controlplane", controlplaneOverlay(ports));
        Path agent = writeOverlay("agent", agentOverlay(ports, node.rootDir()));
        kubectl("apply", "-k", controlplane.toString());
        rollout(CONTROLLERS_NAMESPACE, "deployment/satoken-controlplane");
        rollout(WEBHOOK_NAMESPACE, "deployment/satoken-webhook");
        DeployedManifests.registerWebhooks(node.adminClient(), E2E.repo().resolve("controlplane/deploy"),
                "https://127.0.0.1:" + ports.webhook(), Files.readAllBytes(tls.cert()));
        kubectl("apply", "-k", agent.toString());
        rollout(AGENT_NAMESPACE, "daemonset/satoken-agent");
        Figures.record(TEST, String.format(Locale.ROOT, "node start, image import and the three workloads "
                + "rolled out in %d s", Duration.ofNanos(System.nanoTime() - started).toSeconds()));
    }

    @AfterAll
    static void tearDown() throws Exception {
        // No namespace or garbage-collector controller runs here, so deleting a namespace or a workload would
        // leave its pods: stopping the controllers and closing the node (which deletes the node's pods)
        // takes everything away instead. The consumer, if still there, goes first, while the agent answers
        // its unpublish.
        try {
            if (kubectl != null) {
                keepLogs();
                if (consumer != null) {
                    kubectl.run("-n", consumerNamespace, "delete", "pod", "reader", "--wait=true", "--timeout=60s");
                }
            }
        } finally {
            if (controllers != null) {
                controllers.close();
            }
            if (node != null) {
                node.close();
            }
            if (work != null) {
                try (Stream<Path> files = Files.walk(work)) {
                    files.sorted(java.util.Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
                }
            }
        }
    }

    @Test
    @Order(1)
    void agentDaemonSet_andBothControlPlaneDeployments_runTheBuiltImages_andAreReady() throws Exception {
        AppsV1Api apps = new AppsV1Api(node.adminClient());
        V1DaemonSet agent = apps.readNamespacedDaemonSet("satoken-agent", AGENT_NAMESPACE).execute();
        assertThat(agent.getStatus().getNumberReady()).as("agent pods ready").isEqualTo(1);
        assertThat(image(agent.getSpec().getTemplate().getSpec())).isEqualTo(builtImage("satoken-agent"));
        for (String[] d : new String[][] {{CONTROLLERS_NAMESPACE, "satoken-controlplane"},
                {WEBHOOK_NAMESPACE, "satoken-webhook"}}) {
            V1Deployment deployment = apps.readNamespacedDeployment(d[1], d[0]).execute();
            assertThat(deployment.getStatus().getReadyReplicas()).as(d[1] + " ready replicas").isEqualTo(1);
            assertThat(image(deployment.getSpec().getTemplate().getSpec()))
                    .isEqualTo(builtImage("satoken-controlplane"));
        }
        // the control plane's pods run as the image's and the manifests' non-root user
        V1Pod webhook = onlyPod(WEBHOOK_NAMESPACE, "app.kubernetes.io/name=satoken-webhook");
        assertThat(webhook.getSpec().getSecurityContext().getRunAsUser()).isEqualTo(65532L);
        controllers.checkAlive();
        // installed after the registrations, the agent finds its TokenRequests confined; the webhook finds the agent's
        // DaemonSet running as the account it confines
        V1Pod agentPod = onlyPod(AGENT_NAMESPACE, "app.kubernetes.io/name=satoken-agent");
        assertThat(kubectl("-n", AGENT_NAMESPACE, "logs", agentPod.getMetadata().getName()))
                .contains("token requests confined: webhook serviceaccount-token.satoken.io")
                .doesNotContain("NOT confined");
        Awaitility.await("the webhook's check of the agent's account").atMost(Duration.ofSeconds(60)).until(() ->
                kubectl("-n", WEBHOOK_NAMESPACE, "logs", webhook.getMetadata().getName())
                        .contains("the agent's DaemonSet runs as " + AGENT_NAMESPACE + "/satoken-agent"));
    }

    @Test
    @Order(2)
    void podWithOnlyTheAnnotation_getsItsToken_injectedByTheWebhook_andServedByTheDaemonSetsAgent() throws Exception {
        CoreV1Api core = new CoreV1Api(node.adminClient());
        consumerNamespace = core.createNamespace(new V1Namespace().metadata(new V1ObjectMeta()
                .generateName("consumer-"))).execute().getMetadata().getName();
        // no one but satoken's serviceaccounts controller creates "default" here
        Awaitility.await("ServiceAccount default in " + consumerNamespace).atMost(Duration.ofSeconds(30))
                .ignoreExceptions().until(() -> core.readNamespacedServiceAccount("default", consumerNamespace)
                        .execute() != null);
        V1Pod pod = new V1Pod().metadata(new V1ObjectMeta().name("reader").annotations(Map.of(
                "satoken.io/projections",
                "- path: vault/token\n  audience: " + AUDIENCE + "\n  expirationSeconds: 600\n")))
                .spec(new V1PodSpec().containers(List.of(new V1Container().name("reader").image(TestImages.BUSYBOX)
                        .command(List.of("sleep", "36000")))));
        core.createNamespacedPod(consumerNamespace, pod).execute();

        consumer = node.awaitRunning(consumerNamespace, "reader", Duration.ofSeconds(120));
        assertThat(consumer.getSpec().getNodeName()).as("placed by kube-scheduler").isEqualTo(node.nodeName());
        assertThat(consumer.getSpec().getServiceAccountName()).as("ServiceAccount admission").isEqualTo("default");
        V1Volume tokens = consumer.getSpec().getVolumes().stream().filter(v -> v.getCsi() != null).findFirst()
                .orElseThrow(() -> new AssertionError("no CSI volume injected: " + consumer.getSpec().getVolumes()));
        assertThat(tokens.getCsi().getDriver()).isEqualTo("tokens.satoken.io");

        consumerToken = readToken();
        V1TokenReviewStatus review = ApiChecks.review(node.apiServer(), consumerToken, AUDIENCE);
        assertThat(review.getAuthenticated()).as("TokenReview for %s", AUDIENCE).isTrue();
        assertThat(review.getUser().getUsername()).isEqualTo("system:serviceaccount:" + consumerNamespace + ":default");
        assertThat(review.getUser().getExtra()).containsEntry("authentication.kubernetes.io/pod-uid",
                List.of(consumer.getMetadata().getUid()));
        assertThat(agentTokenRequests()).as("the agent's TokenRequests, from the API server's audit log")
                .isEqualTo(1);
    }

    @Test
    @Order(3)
    void rollingRestartOfTheDaemonSet_costsNoTokenRequest_andThePodKeepsItsToken() throws Exception {
        assertThat(consumerToken).as("the previous test's token").isNotNull();
        V1Pod before = onlyPod(AGENT_NAMESPACE, "app.kubernetes.io/name=satoken-agent");
        long requestsBefore = agentTokenRequests();
        Files.writeString(E2E.newLog(TEST + "-agent-before-restart"),
                kubectl.run("-n", AGENT_NAMESPACE, "logs", before.getMetadata().getName()).output());

        kubectl("-n", AGENT_NAMESPACE, "rollout", "restart", "daemonset/satoken-agent");
        rollout(AGENT_NAMESPACE, "daemonset/satoken-agent");
        V1Pod after = onlyPod(AGENT_NAMESPACE, "app.kubernetes.io/name=satoken-agent");
        assertThat(after.getMetadata().getUid()).as("a new agent pod").isNotEqualTo(before.getMetadata().getUid());

        // the new agent has resumed the volume and holds its token; 20 s in which it might have asked again
        Awaitility.await().during(Duration.ofSeconds(20)).atMost(Duration.ofSeconds(30))
                .until(() -> agentTokenRequests() == requestsBefore);
        assertThat(agentTokenRequests()).as("TokenRequests by the agent, from the API server's audit log")
                .isEqualTo(requestsBefore);
        assertThat(sha256(readToken())).as("the token file after the restart").isEqualTo(sha256(consumerToken));

        // docs/operations.md's way to look at one pod: kubectl satoken explain, which asks the agent on the pod's node
        Commands.Result explained = kubectl.plugin(E2E.repo().resolve("agent/bin/kubectl-satoken"), "explain",
                consumerNamespace + "/reader");
        assertThat(explained.exit()).as("kubectl satoken explain; output:\n%s", explained.output()).isZero();
        assertThat(explained.output()).contains("asking " + AGENT_NAMESPACE + "/" + after.getMetadata().getName()
                + ", the agent on node " + node.nodeName());
        assertThat(explained.output()).contains("Pod " + consumerNamespace + "/reader", "vault/token",
                "ServiceAccount: " + consumerNamespace + "/default", "audiences:      " + AUDIENCE,
                "of the token now in the file").doesNotContainPattern(IssuedTokens.JWT_SHAPE);
        Figures.record(TEST, String.format(Locale.ROOT, "DaemonSet rolling restart: agent TokenRequests %d before,"
                + " %d after (audit log); the pod's token unchanged", requestsBefore, agentTokenRequests()));
    }

    @Test
    @Order(4)
    void deletingTheConsumer_unmountsItsTokenVolume_throughTheAgentsPod() throws Exception {
        assertThat(consumer).as("the pod of the earlier tests").isNotNull();
        assertThat(agentMounts()).as("the agent's tmpfs, made in its container, seen on the host").hasSize(1);

        kubectl("-n", consumerNamespace, "delete", "pod", "reader", "--wait=true", "--timeout=60s");

        assertThat(agentMounts()).as("the agent's tmpfs mounts under the kubelet's pods after the deletion").isEmpty();
        consumer = null;
    }

    private static List<MountTable.Mount> agentMounts() throws IOException {
        return MountTable.under(node.rootDir().resolve("pods")).stream()
                .filter(m -> "tokens.satoken.io".equals(m.source())).toList();
    }

    // --- the overlays ----------------------------------------------------------------------------

    /** The free ports the workloads use on the host's network, and the API server's. */
    private record Ports(int agentMetrics, int controllersMetrics, int webhookMetrics, int webhook, int apiServer) {
    }

    private static Path writeOverlay(String name, String kustomization) throws IOException {
        Path dir = Files.createDirectories(overlays.resolve(name));
        Files.writeString(dir.resolve("kustomization.yaml"), kustomization);
        return dir;
    }

    private static String controlplaneOverlay(Ports ports) throws IOException {
        StringBuilder k = new StringBuilder(header("controlplane/deploy"));
        for (String ns : List.of(CONTROLLERS_NAMESPACE, WEBHOOK_NAMESPACE)) {
            k.append(patch("Namespace", ns, List.of(
                    op("add", "/metadata/labels/pod-security.kubernetes.io~1enforce", "\"privileged\""))));
        }
        for (V1Deployment d : DeployedManifests.deployments(E2E.repo().resolve("controlplane/deploy"))) {
            V1Container c = d.getSpec().getTemplate().getSpec().getContainers().get(0);
            boolean webhook = c.getArgs().stream().anyMatch(a -> a.startsWith("--webhook-address="));
            int metrics = webhook ? ports.webhookMetrics() : ports.controllersMetrics();
            List<String> ops = new ArrayList<>(hostNetwork(ports));
            ops.add(op("replace", "/spec/replicas", "1"));
            ops.addAll(replaceArg(c.getArgs(), "args", "--metrics-address=", "0.0.0.0:" + metrics));
            ops.addAll(replacePort(c, "metrics", metrics));
            if (webhook) {
                ops.addAll(replaceArg(c.getArgs(), "args", "--webhook-address=", "0.0.0.0:" + ports.webhook()));
                ops.addAll(replacePort(c, "webhook", ports.webhook()));
            }
            k.append(patch("Deployment", d.getMetadata().getName(), ops));
        }
        return k.toString();
    }

    private static String agentOverlay(Ports ports, Path kubeletDir) throws IOException {
        Path deploy = E2E.repo().resolve("agent/deploy");
        V1DaemonSet ds = (V1DaemonSet) Yaml.loadAll(deploy.resolve("30-daemonset.yaml").toFile()).get(0);
        V1ConfigMap config = (V1ConfigMap) Yaml.loadAll(deploy.resolve("20-configmap.yaml").toFile()).get(0);
        V1PodSpec spec = ds.getSpec().getTemplate().getSpec();
        V1Container c = spec.getContainers().get(0);
        List<String> ops = new ArrayList<>(hostNetwork(ports));
        // the metrics address is the argument after --metrics-address in the command
        int flag = c.getCommand().indexOf("--metrics-address");
        assertThat(flag).as("--metrics-address in the DaemonSet's command").isNotNegative();
        String path = "/spec/template/spec/containers/0/command/" + (flag + 1);
        ops.add(op("test", path, json(c.getCommand().get(flag + 1))));
        // still the node's loopback, which the probes ask (the DaemonSet has the host's network and no port)
        ops.add(op("replace", path, json("127.0.0.1:" + ports.agentMetrics())));
        for (String probe : List.of("startupProbe", "livenessProbe", "readinessProbe")) {
            ops.add(op("replace", "/spec/template/spec/containers/0/" + probe + "/httpGet/port",
                    Integer.toString(ports.agentMetrics())));
        }
        // the kubelet's directory, at the same path in the container as on the host
        String defaultDir = "/var/lib/kubelet";
        for (int i = 0; i < spec.getVolumes().size(); i++) {
            V1Volume v = spec.getVolumes().get(i);
            if (v.getHostPath() != null && v.getHostPath().getPath().startsWith(defaultDir)) {
                String moved = kubeletDir + v.getHostPath().getPath().substring(defaultDir.length());
                ops.add(op("replace", "/spec/template/spec/volumes/" + i + "/hostPath/path", json(moved)));
                for (int m = 0; m < c.getVolumeMounts().size(); m++) {
                    if (c.getVolumeMounts().get(m).getName().equals(v.getName())) {
                        ops.add(op("test", "/spec/template/spec/containers/0/volumeMounts/" + m + "/mountPath",
                                json(v.getHostPath().getPath())));
                        ops.add(op("replace", "/spec/template/spec/containers/0/volumeMounts/" + m + "/mountPath",
                                json(moved)));
                    }
                }
            }
        }
        String agentYaml = config.getData().get("agent.yaml");
        assertThat(agentYaml).contains("kubeletDir: " + defaultDir + "\n");
        String configOp = op("replace", "/data/agent.yaml",
                json(agentYaml.replace("kubeletDir: " + defaultDir + "\n", "kubeletDir: " + kubeletDir + "\n")));
        return header("agent/deploy")
                + patch("DaemonSet", ds.getMetadata().getName(), ops)
                + patch("ConfigMap", config.getMetadata().getName(), List.of(configOp));
    }

    private static String header(String base) {
        // relative, as kustomize wants: e2e/target/product-pods-overlays/<name> -> the repository's root
        return "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources:\n  - ../../../../"
                + base + "\npatches:\n";
    }

    /** The pod template's ops for the host's network, the API server's address and the local images. */
    private static List<String> hostNetwork(Ports ports) {
        String container = "/spec/template/spec/containers/0";
        return List.of(
                op("add", "/spec/template/spec/hostNetwork", "true"),
                op("add", container + "/imagePullPolicy", json("Never")),
                op("add", container + "/env/-", "{\"name\":\"KUBERNETES_SERVICE_HOST\",\"value\":\"127.0.0.1\"}"),
                op("add", container + "/env/-", "{\"name\":\"KUBERNETES_SERVICE_PORT\",\"value\":\""
                        + ports.apiServer() + "\"}"));
    }

    private static List<String> replaceArg(List<String> args, String field, String prefix, String value) {
        int i = 0;
        while (i < args.size() && !args.get(i).startsWith(prefix)) {
            i++;
        }
        assertThat(i).as(prefix + " in " + args).isLessThan(args.size());
        String path = "/spec/template/spec/containers/0/" + field + "/" + i;
        return List.of(op("test", path, json(args.get(i))), op("replace", path, json(prefix + value)));
    }

    private static List<String> replacePort(V1Container c, String name, int port) {
        for (int i = 0; i < c.getPorts().size(); i++) {
            if (name.equals(c.getPorts().get(i).getName())) {
                String path = "/spec/template/spec/containers/0/ports/" + i;
                return List.of(op("test", path + "/name", json(name)),
                        op("replace", path + "/containerPort", Integer.toString(port)));
            }
        }
        throw new AssertionError("no port named " + name + " in " + c.getPorts());
    }

    private static String patch(String kind, String name, List<String> ops) {
        // a JSON 6902 patch is JSON, which is YAML: single-quoted, as no op holds a single quote
        String body = "[" + String.join(",", ops) + "]";
        assertThat(body).doesNotContain("'");
        return "  - target: {kind: " + kind + ", name: " + name + "}\n    patch: '" + body + "'\n";
    }

    private static String op(String op, String path, String jsonValue) {
        return "{\"op\":\"" + op + "\",\"path\":\"" + path + "\",\"value\":" + jsonValue + "}";
    }

    private static String json(String s) {
        return new GsonBuilder().disableHtmlEscaping().create().toJson(s);
    }

    // --- helpers ---------------------------------------------------------------------------------

    private static void skipUnless(Optional<String> missing) {
        if (missing.isPresent()) {
            System.err.println("*** SKIPPED " + TEST + ": " + missing.get() + " ***");
            Assumptions.abort(missing.get());
        }
    }

    private static String kubectl(String... args) throws IOException, InterruptedException {
        Commands.Result r = kubectl.run(args);
        if (r.exit() != 0) {
            throw new AssertionError("kubectl " + String.join(" ", args) + " exited " + r.exit() + ":\n" + r.output());
        }
        return r.output();
    }

    private static void rollout(String namespace, String workload) throws Exception {
        Commands.Result r = kubectl.run("-n", namespace, "rollout", "status", workload,
                "--timeout=" + ROLLOUT.toSeconds() + "s");
        if (r.exit() != 0) {
            Commands.Result describe = kubectl.run("-n", namespace, "describe", "pods");
            throw new AssertionError("rollout of " + workload + " did not finish: " + r.output() + "\n"
                    + describe.output() + "\n" + kubectl.run("get", "events", "-A").output());
        }
    }

    private static V1Pod onlyPod(String namespace, String selector) throws Exception {
        List<V1Pod> pods = new CoreV1Api(node.adminClient()).listNamespacedPod(namespace).labelSelector(selector)
                .execute().getItems().stream().filter(p -> p.getMetadata().getDeletionTimestamp() == null).toList();
        assertThat(pods).as("pods %s in %s", selector, namespace).hasSize(1);
        return pods.get(0);
    }

    private static String image(V1PodSpec spec) {
        return spec.getContainers().get(0).getImage();
    }

    /** The name the images profile tags the archive with: the shared kustomize component's. */
    private static String builtImage(String program) throws Exception {
        return ImageArchive.nameInImagesComponent(program);
    }

    private static String readToken() throws IOException {
        ExecResult cat = node.exec(consumerNamespace, "reader", "reader", "cat", TOKEN_FILE);
        assertThat(cat.succeeded()).as("cat %s: %s", TOKEN_FILE, cat.stderr()).isTrue();
        return IssuedTokens.record(cat.stdout());
    }

    /** TokenRequests the API server answered 201 for the agent's identity, from its audit log. */
    private static long agentTokenRequests() throws IOException {
        if (!Files.exists(auditLog)) {
            return 0;
        }
        long n = 0;
        for (String line : Files.readAllLines(auditLog, StandardCharsets.UTF_8)) {
            JsonObject event = JsonParser.parseString(line).getAsJsonObject();
            JsonObject ref = event.getAsJsonObject("objectRef");
            if ("ResponseComplete".equals(string(event.get("stage"))) && "create".equals(string(event.get("verb")))
                    && ref != null && "token".equals(string(ref.get("subresource")))
                    && AGENT_USER.equals(string(event.getAsJsonObject("user").get("username")))
                    && event.getAsJsonObject("responseStatus").get("code").getAsInt() == 201) {
                n++;
            }
        }
        return n;
    }

    private static String string(JsonElement e) {
        return e == null || e.isJsonNull() ? null : e.getAsString();
    }

    private static String sha256(String s) throws Exception {
        return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(s.getBytes(StandardCharsets.UTF_8)));
    }

    /** The workloads' logs (every container, the restarted agent's too) go where SecretsHygieneE2E reads. */
    private static void keepLogs() throws Exception {
        for (String ns : List.of(AGENT_NAMESPACE, CONTROLLERS_NAMESPACE, WEBHOOK_NAMESPACE)) {
            Commands.Result r = kubectl.run("-n", ns, "logs", "--all-containers", "--prefix", "--tail=-1",
                    "-l", "app.kubernetes.io/part-of=satoken");
            Files.writeString(E2E.newLog(TEST + "-" + ns), r.output());
        }
    }
}
