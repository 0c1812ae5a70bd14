package io.satoken.e2e.node;

import io.kubernetes.client.openapi.ApiClient;
import io.kubernetes.client.openapi.ApiException;
import io.kubernetes.client.openapi.apis.CoreV1Api;
import io.kubernetes.client.openapi.models.V1Namespace;
import io.kubernetes.client.openapi.models.V1Node;
import io.kubernetes.client.openapi.models.V1NodeCondition;
import io.kubernetes.client.openapi.models.V1ObjectMeta;
import io.kubernetes.client.openapi.models.V1Pod;
import io.satoken.common.testing.KubeApiServer;
import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.function.Consumer;
import org.junit.jupiter.api.Assumptions;

/**
 * A real Kubernetes node on this machine, for end-to-end tests that run real pods: a kube-apiserver (with
 * etcd), containerd with runc and a private CNI bridge, and a v1.26 kubelet registered as
 * {@link #nodeName()}. Pods bound to the node ({@link #runPod}) run as real containers from the images of
 * {@link TestImages}, with real volume mounts under {@link #rootDir()}.
 *
 * <p>Start-up, each step undone by {@link #close()} in reverse (see {@link Cleanups}):
 * <ol>
 *   <li>a temp directory {@code /tmp/satoken-node-*}, which holds everything but the API server's files,
 *       and a record of the host state the node changes ({@link HostLeftovers}, {@link KernelSettings});
 *   <li>the node CA and its client certificates: the kubelet's ({@code system:node:<name>}) and the API
 *       server's for the kubelet;
 *   <li>the API server, trusting the CA for client certificates, with the Node authorizer (the kubelet
 *       fetches its pods' ServiceAccount tokens as the node) before RBAC;
 *   <li>the CNI network, containerd, and the images imported with {@code ctr};
 *   <li>the kubelet, then a wait for the Node to be Ready.
 * </ol>
 * {@code close()} deletes the node's pods (so the kubelet unmounts their volumes), stops the kubelet and
 * containerd by pid, kills any shim of this containerd left running, unmounts everything under the temp
 * directory, deletes the bridge, restores the sysctls and what {@link HostLeftovers} lists, and deletes the
 * temp directory. A JVM shutdown hook does the same if a test never gets to close the node. The processes'
 * logs are kept in the suite's log directory ({@code e2e/target/e2e-logs}). With
 * {@code -Dsatoken.node.trace=true} each cleanup step prints how long it took.
 *
 * <p>There is no controller-manager and no scheduler: pods are created with {@code spec.nodeName} set, and
 * ServiceAccounts are created by the test ({@link #createNamespace} creates {@code default}). One node per
 * machine at a time.
 */
public final class KubeletNode implements AutoCloseable {

    /** The JUnit resource lock of the machine's one node: test classes that start a node hold it. */
    public static final String RESOURCE = "satoken.kubelet-node";
    /** How long a start may take before it counts as failed; a node is usually Ready within 2 s. */
    public static final Duration DEFAULT_READY_TIMEOUT = Duration.ofSeconds(90);
    /** How long {@link #exec} waits for a command. */
    public static final Duration EXEC_TIMEOUT = Duration.ofSeconds(60);
    private static final Duration POD_DELETE_TIMEOUT = Duration.ofSeconds(60);

    private final Cleanups cleanups = new Cleanups();
    private final Consumer<KubeApiServer.Builder> apiServerOptions;
    private final Map<String, String> kubeletConfig;
    private final Duration readyTimeout;
    private final Thread shutdownHook = new Thread(cleanups::runAll, "kubelet-node-shutdown");

    private String nodeName;
    private Path dir;
    private KubeApiServer server;
    private Containerd containerd;
    private Kubelet kubelet;
    private volatile PodsOnNode pods;
    private Duration readyTime;

    private KubeletNode(Builder builder) {
        this.apiServerOptions = builder.apiServerOptions;
        this.kubeletConfig = Map.copyOf(builder.kubeletConfig);
        this.readyTimeout = builder.readyTimeout;
    }

    public static Builder builder() {
        return new Builder();
    }

    /** Why this machine cannot run a node (e.g. "kubelet not found in ..."), or empty when it can. */
    public static Optional<String> unavailableReason() {
        return NodePrerequisites.missing();
    }

    /**
     * For tests not annotated {@link RequiresKubeletNode}: where no node can run, prints one loud line and
     * aborts the test (a JUnit assumption), never fakes it.
     */
    public static void assumeAvailable() {
        Optional<String> missing = unavailableReason();
        if (missing.isPresent()) {
            System.err.println("*** SKIPPED real-node test: " + missing.get() + " ***");
            Assumptions.abort(missing.get());
        }
    }

    /** The minor version of the kubelet these tests run, from {@code kubelet --version} (36 for v1.36.2); 0 if unknown. */
    public static int minorVersion() {
        return Kubelet.minorVersion();
    }

    // --- start -----------------------------------------------------------------------------------

    private KubeletNode start() throws IOException {
        Runtime.getRuntime().addShutdownHook(shutdownHook);
        try {
            startParts();
        } catch (IOException | ApiException | RuntimeException e) {
            String message = String.valueOf(e.getMessage());
            StringBuilder logs = new StringBuilder();
            // a process that failed put its own log's tail in the message; add the other's
            if (kubelet != null && kubelet.process() != null && !message.contains(kubelet.process().log().toString())) {
                logs.append(kubelet.tail());
            }
            if (containerd != null && containerd.log() != null && !message.contains(containerd.log().toString())) {
                logs.append(containerd.tail());
            }
            close();
            throw new IOException("the test node did not start: " + message + "\n" + logs, e);
        }
        return this;
    }

    private void startParts() throws IOException, ApiException {
        // 1. the directory, and the host state to restore
        nodeName = NodePrerequisites.nodeName();
        // under /tmp whatever java.io.tmpdir says: unix socket paths (containerd's, CSI drivers' under
        // <root>/plugins) must stay under 108 bytes
        dir = Files.createTempDirectory(Path.of("/tmp"), "satoken-node-");
        Path nodeDir = dir;
        cleanups.push("delete " + nodeDir, () -> HostLeftovers.deleteRecursively(nodeDir));
        cleanups.push("unmount under " + nodeDir, () -> {
            List<Path> stuck = Mounts.unmountAll(nodeDir);
            if (!stuck.isEmpty()) {
                throw new IOException("still mounted: " + stuck);
            }
        });
        CniNetwork network = new CniNetwork(dir.resolve("cni"));
        cleanups.push("delete the CNI bridge", network::remove);
        HostLeftovers leftovers = HostLeftovers.record();
        cleanups.push("remove host leftovers", () -> leftovers.remove(pods == null ? Set.of() : pods.uids()));
        KernelSettings kernel = KernelSettings.save();
        cleanups.push("restore " + kernel.values(), kernel::restore);

        // 2. certificates and images
        NodeCertificates pki = NodeCertificates.createCa(dir.resolve("pki"));
        NodeCertificates.Pair nodeCert = pki.client("kubelet-client", "system:node:" + nodeName, "system:nodes");
        NodeCertificates.Pair apiServerCert = pki.client("apiserver-kubelet-client", "kube-apiserver-kubelet-client",
                null);
        Path images = Files.createDirectories(dir.resolve("images"));
        List<TestImages.Image> testImages = List.of(TestImages.pause(images), TestImages.busybox(images));

        // 3. the API server
        KubeApiServer.Builder api = KubeApiServer.builder()
                .flag("--client-ca-file", pki.caCertificate().toString())
                .flag("--kubelet-client-certificate", apiServerCert.cert().toString())
                .flag("--kubelet-client-key", apiServerCert.key().toString())
                .flag("--authorization-mode", "Node,RBAC");
        apiServerOptions.accept(api);
        server = api.build();
        cleanups.push("stop the API server", this::closeApiServerKeepingLogs);
        server.start();

        // 4. network, containerd, images
        network.write();
        containerd = new Containerd(dir.resolve("containerd"), network);
        cleanups.push("kill containerd's shims", containerd::killShims);
        cleanups.push("stop containerd", containerd::stop);
        containerd.start();
        for (TestImages.Image image : testImages) {
            containerd.importImage(image.archive());
        }

        // 5. the kubelet, and the wait for Ready
        InetAddress address = NodePrerequisites.nodeAddress();
        kubelet = new Kubelet(dir, nodeName, address.getHostAddress(), freePort(address), pki.caCertificate(),
                kubeletConfig);
        pods = new PodsOnNode(server.adminClient(), nodeName, kubelet);
        cleanups.push("stop the kubelet", kubelet::stop);
        cleanups.push("delete the node's pods", () -> pods.deleteAll(POD_DELETE_TIMEOUT));
        long started = System.nanoTime();
        kubelet.start(server, nodeCert, containerd.socket());
        kubelet.process().awaitReady("Ready node " + nodeName, this::nodeReady, readyTimeout);
        readyTime = Duration.ofNanos(System.nanoTime() - started);
        System.err.printf("node: %s Ready %d ms after the kubelet started (%s; logs %s, %s)%n", nodeName,
                readyTime.toMillis(), dir, kubelet.process().log(), containerd.log());
        // one loud line, so a report says which kubelet each real-node test ran against
        System.out.printf("==== kubelet %s from %s ====%n", new CoreV1Api(server.adminClient()).readNode(nodeName)
                .execute().getStatus().getNodeInfo().getKubeletVersion(), KubeApiServer.assetsDir());
    }

    private boolean nodeReady() throws ApiException {
        V1Node node = new CoreV1Api(server.adminClient()).readNode(nodeName).execute();
        List<V1NodeCondition> conditions = node.getStatus() == null ? null : node.getStatus().getConditions();
        return conditions != null && conditions.stream()
                .anyMatch(c -> "Ready".equals(c.getType()) && "True".equals(c.getStatus()));
    }

    // --- what tests use --------------------------------------------------------------------------

    /** The node's name: this machine's hostname, lowercased (it resolves, so the API server reaches the kubelet). */
    public String nodeName() {
        return nodeName;
    }

    /** The kubelet's {@code --root-dir}: {@code pods/<uid>/volumes}, {@code plugins}, {@code plugins_registry}. */
    public Path rootDir() {
        return kubelet.rootDir();
    }

    /** The node's temp directory (containerd, CNI, certificates, images, the kubelet's root). */
    public Path workDir() {
        return dir;
    }

    /** The API server the kubelet is registered with. */
    public KubeApiServer apiServer() {
        return server;
    }

    /** A client acting as the API server's admin ({@code system:masters}). */
    public ApiClient adminClient() {
        return server.adminClient();
    }

    /** From the kubelet's start to the node's Ready condition being True. */
    public Duration readyTime() {
        return readyTime;
    }

    public Path kubeletLog() {
        return kubelet.process().log();
    }

    public Path containerdLog() {
        return containerd.log();
    }

    /** Imports another OCI image archive into the node's containerd (namespace {@code k8s.io}). */
    public void importImage(Path archive) throws IOException {
        containerd.importImage(archive);
    }

    /** The images the node's containerd holds, by name ({@code ctr images ls -q}). */
    public List<String> images() throws IOException {
        return containerd.ctr("images", "ls", "-q").lines().map(String::strip).filter(s -> !s.isEmpty()).toList();
    }

    /**
     * Creates a namespace {@code prefix-<random>} with {@code labels} (e.g. {@code
     * pod-security.kubernetes.io/enforce: restricted}) and its {@code default} ServiceAccount, which no
     * controller-manager creates here; returns its name.
     */
    public String createNamespace(String prefix, Map<String, String> labels) throws ApiException {
        V1Namespace ns = new V1Namespace().metadata(new V1ObjectMeta().generateName(prefix + "-").labels(labels));
        String name = new CoreV1Api(adminClient()).createNamespace(ns).execute().getMetadata().getName();
        server.createServiceAccount(name, "default");
        return name;
    }

    /**
     * Creates {@code pod} in {@code namespace} bound to this node (its {@code spec.nodeName} is set when null)
     * and waits until it is Running. Name its ServiceAccount explicitly ({@code spec.serviceAccountName}):
     * without the ServiceAccount admission plugin nothing defaults it.
     */
    public RunningPod runPod(String namespace, V1Pod pod, Duration timeout) throws ApiException, IOException {
        return pods.run(namespace, pod, timeout);
    }

    /**
     * Polls the pod every 50 ms until its phase is Running; fails when it ends (Succeeded/Failed), the kubelet
     * exits or {@code timeout} passes, with the pod's status, its events and the kubelet's log tail in the
     * message.
     */
    public V1Pod awaitRunning(String namespace, String name, Duration timeout) throws ApiException, IOException {
        return pods.awaitRunning(namespace, name, timeout);
    }

    /**
     * Runs {@code command} in {@code container} of a running pod ({@code kubectl exec} without kubectl, see
     * {@link PodExec}) and returns its exit code and output; waits at most {@link #EXEC_TIMEOUT}. The exit
     * code is -1 when the runtime could not start the command (e.g. it is not in the image).
     */
    public ExecResult exec(String namespace, String pod, String container, String... command) throws IOException {
        return new PodExec(adminClient()).exec(namespace, pod, container, EXEC_TIMEOUT, command);
    }

    // --- close -----------------------------------------------------------------------------------

    /** Stops everything and takes back what the node changed on the machine; see the class comment. */
    @Override
    public void close() {
        cleanups.runAll();
        try {
            Runtime.getRuntime().removeShutdownHook(shutdownHook);
        } catch (IllegalStateException shuttingDown) {
            // the hook is running or about to: it does the same
        }
    }

    /** The API server's and etcd's logs are copied into the suite's log directory before its temp dir goes. */
    private void closeApiServerKeepingLogs() {
        try {
            if (server.workDir() != null) {
                for (String process : List.of("kube-apiserver", "etcd")) {
                    Path log = server.workDir().resolve(process + ".log");
                    if (Files.exists(log)) {
                        Files.copy(log, NodeLogs.newLog(process), StandardCopyOption.REPLACE_EXISTING);
                    }
                }
            }
        } catch (IOException e) {
            System.err.println("node: could not keep the API server's logs: " + e);
        } finally {
            server.close();
        }
    }

    private static int freePort(InetAddress address) throws IOException {
        try (ServerSocket s = new ServerSocket(0, 1, address)) {
            return s.getLocalPort();
        }
    }

    /** Options of a {@link KubeletNode}; {@link #start()} starts it. */
    public static final class Builder {
        private Consumer<KubeApiServer.Builder> apiServerOptions = b -> { };
        private final Map<String, String> kubeletConfig = new LinkedHashMap<>();
        private Duration readyTimeout = DEFAULT_READY_TIMEOUT;

        private Builder() {
        }

        /**
         * More API server flags, applied after the node's own ({@code --client-ca-file},
         * {@code --kubelet-client-*}, {@code --authorization-mode=Node,RBAC}), e.g.
         * {@code b -> b.flag("--enable-admission-plugins", "NodeRestriction")}.
         */
        public Builder apiServer(Consumer<KubeApiServer.Builder> options) {
            this.apiServerOptions = options;
            return this;
        }

        /**
         * Sets a top-level {@code KubeletConfiguration} field to a YAML (flow-style) value, replacing the
         * node's default, e.g. {@code kubeletConfig("syncFrequency", "10s")}.
         */
        public Builder kubeletConfig(String field, String yamlValue) {
            kubeletConfig.put(field, yamlValue);
            return this;
        }

        public Builder readyTimeout(Duration timeout) {
            this.readyTimeout = timeout;
            return this;
        }

        /**
         * Starts the node and waits until it is Ready. On failure everything started is undone and the
         * exception carries the kubelet's and containerd's log tails.
         */
        public KubeletNode start() throws IOException {
            return new KubeletNode(this).start();
        }
    }
}
