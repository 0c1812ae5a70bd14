package io.satoken.e2e;

import io.kubernetes.client.openapi.ApiException;
import io.kubernetes.client.openapi.apis.CoreV1Api;
import io.kubernetes.client.openapi.apis.StorageV1Api;
import io.kubernetes.client.openapi.apis.VersionApi;
import io.kubernetes.client.openapi.models.V1CSINode;
import io.kubernetes.client.openapi.models.V1CSINodeDriver;
import io.kubernetes.client.openapi.models.V1ObjectMeta;
import io.kubernetes.client.openapi.models.V1ServiceAccount;
import io.satoken.agent.testing.TokenRequestAudit;
import io.satoken.common.projection.CsiVolumeAttributes;
import io.satoken.common.testing.KubeApiServer;
import io.satoken.common.testing.Manifests;
import io.satoken.e2e.node.KubeletNode;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.Comparator;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.function.BooleanSupplier;
import java.util.stream.Stream;
import org.junit.jupiter.api.Assumptions;

/**
 * A real kubelet node ({@link KubeletNode}) whose CSI driver {@value CsiVolumeAttributes#DRIVER} is the agent, run
 * as the DaemonSet runs it minus the pod: the CSIDriver object of {@code agent/deploy}, the agent's own RBAC and
 * identity ({@link AgentIdentity}), {@code mode: csi} on the kubelet's root dir, registered with the kubelet through
 * its plugin registry. Tests that run pods with the agent's volumes start one per class; closing it deletes the
 * pods first, while the agent still answers their unpublishes, then stops the agent.
 */
final class CsiDriverNode implements AutoCloseable {

    static final String DRIVER = CsiVolumeAttributes.DRIVER;
    static final Duration AGENT_READY = Duration.ofSeconds(60);

    private final KubeletNode node;
    private final Path work;
    private final Path agentConfig;
    private final Path agentKubeconfig;
    private final String metricsAddress;
    private SatokenProcess agent;
    /** The API server's audit log and policy, where {@link #startImpersonating} enabled it; else null. */
    private Path auditDir;

    private CsiDriverNode(KubeletNode node, Path work, Path agentConfig, Path agentKubeconfig, String metricsAddress) {
        this.node = node;
        this.work = work;
        this.agentConfig = agentConfig;
        this.agentKubeconfig = agentKubeconfig;
        this.metricsAddress = metricsAddress;
    }

    /**
     * Starts the node (aborting the test, loudly, where none can run) and the agent (its log named
     * {@code agentName}), and waits until the kubelet lists the driver in the node's CSINode; records the node's
     * start time under {@code test}.
     */
    static CsiDriverNode start(String test, String agentName) throws Exception {
        KubeletNode.assumeAvailable();
        return start(test, agentName, KubeletNode.builder(), (node, work) -> {
            Manifests.apply(node.apiServer(), E2E.repo().resolve("agent/deploy/25-csidriver.yaml"));
            Path kubeconfig = AgentIdentity.kubeconfig(node.apiServer(), work.resolve("agent.kubeconfig"));
            return new Agent(agentConfig(work, node, ""), kubeconfig);
        });
    }

    /**
     * As {@link #start(String, String)}, with the agent as the kubelet-minted profile ({@code
     * deploy/profiles/kubelet-minted}) deploys it: its CSIDriver lists {@code tokenRequests} (here one audience,
     * {@code audience}, of {@code lifetime} seconds) with {@code requiresRepublish}, and, on a 1.35+ API server, the
     * Component {@code tokens-in-secrets}; its ClusterRole grants no {@code serviceaccounts/token}; its config says
     * {@code tokenSource: kubelet}. The profile's CSIDriver, namespace, ServiceAccount, ClusterRole and binding are
     * rendered by {@code kubectl kustomize} and applied by {@code kubectl apply} (client-java does not know the
     * CSIDriver's newer fields).
     */
    static CsiDriverNode startKubeletMinted(String test, String agentName, String audience, long lifetime)
            throws Exception {
        KubeletNode.assumeAvailable();
        return start(test, agentName, KubeletNode.builder(), (node, work) -> {
            boolean inSecrets = apiMinor(node) >= 35;
            Path overlay = Files.createDirectories(work.resolve("kubelet-minted"));
            Files.writeString(overlay.resolve("kustomization.yaml"), "apiVersion: kustomize.config.k8s.io/v1beta1\n"
                    + "kind: Kustomization\nresources:\n  - " + relative(overlay, "deploy/profiles/kubelet-minted")
                    + "\n" + (inSecrets ? "components:\n  - " + relative(overlay,
                            "agent/deploy/components/tokens-in-secrets") + "\n" : "")
                    + "patches:\n  - patch: |-\n      - op: replace\n        path: /spec/tokenRequests\n"
                    + "        value: [{audience: " + audience + ", expirationSeconds: " + lifetime + "}]\n"
                    + "    target: {kind: CSIDriver, name: " + DRIVER + "}\n");
            Commands.Result rendered = Commands.run("kubelet-minted-kustomize", List.of("kubectl", "kustomize",
                    overlay.toString()));
            if (rendered.exit() != 0) {
                throw new AssertionError("kubectl kustomize " + overlay + ":\n" + rendered.output());
            }
            List<String> kinds = List.of("Namespace", "ServiceAccount", "ClusterRole", "ClusterRoleBinding", "CSIDriver");
            String objects = Stream.of(rendered.output().split("(?m)^---$"))
                    .filter(doc -> kinds.stream().anyMatch(k -> doc.contains("\nkind: " + k + "\n")))
                    .reduce((a, b) -> a + "---" + b).orElseThrow();
            Kubectl.forAdmin(node.apiServer()).apply(Files.writeString(work.resolve("kubelet-minted.yaml"), objects));
            Path kubeconfig = work.resolve("agent.kubeconfig");
            node.apiServer().writeKubeconfig(kubeconfig, IssuedTokens.record(node.apiServer().serviceAccountToken(
                    AgentIdentity.NAMESPACE, AgentIdentity.SERVICE_ACCOUNT)));
            return new Agent(agentConfig(work, node, "tokenSource: kubelet\n"), kubeconfig);
        });
    }

    /** A directory of the repository as kustomize takes it: relative to the kustomization's own. */
    private static Path relative(Path overlay, String dir) {
        return overlay.toAbsolutePath().relativize(E2E.repo().resolve(dir).toAbsolutePath().normalize());
    }

    /** The API server's minor version. */
    static int apiMinor(KubeletNode node) throws ApiException {
        return Integer.parseInt(new VersionApi(node.adminClient()).getCode().execute().getMinor().replaceAll("\\D", ""));
    }

    /** The agent's config and kubeconfig. */
    private record Agent(Path config, Path kubeconfig) {}

    /** Applies what the agent needs to the node's API server and writes its files under {@code work}. */
    @FunctionalInterface
    private interface Install {
        Agent install(KubeletNode node, Path work) throws Exception;
    }

    /** The agent's config in CSI mode on the node's kubelet dir, with {@code more} (YAML lines) appended. */
    private static Path agentConfig(Path work, KubeletNode node, String more) throws IOException {
        return Files.writeString(work.resolve("agent.yaml"), "mode: csi\nkubeletDir: " + node.rootDir() + "\n" + more);
    }

    /**
     * As {@link #start(String, String)}, with the agent in the node-impersonation profile
     * (deploy/profiles/node-impersonation): the API server runs NodeRestriction, the agent holds the profile's RBAC
     * with the nodes granted {@code audiences}, its credential is a token bound to its pod on the node, and its config
     * says {@code tokenSource: node-impersonation}. No webhook is installed. Aborts the test, loudly, where the
     * kubelet (and so the API server) is older than 1.36.
     */
    static CsiDriverNode startImpersonating(String test, String agentName, List<String> audiences) throws Exception {
        KubeletNode.assumeAvailable();
        int minor = KubeletNode.minorVersion();
        if (minor < 36) {
            System.err.println("*** SKIPPED " + test + " (node impersonation): Kubernetes v1." + minor + " from "
                    + KubeApiServer.assetsDir() + " has no constrained impersonation on by"
                    + " default (1.36+); it runs in the v1.36 tier ***");
            Assumptions.abort("node impersonation needs Kubernetes 1.36+, got v1." + minor);
        }
        // the API server's audit log says under which user each TokenRequest ran
        Path audit = Files.createTempDirectory("satoken-audit");
        Path policy = TokenRequestAudit.writePolicy(audit.resolve("policy.yaml"));
        CsiDriverNode started = start(test, agentName, KubeletNode.builder().apiServer(b -> b
                        .flag("--enable-admission-plugins", "NodeRestriction")
                        .flag("--audit-policy-file", policy.toString())
                        .flag("--audit-log-path", audit.resolve("audit.log").toString())),
                (node, work) -> {
                    Manifests.apply(node.apiServer(), E2E.repo().resolve("agent/deploy/25-csidriver.yaml"));
                    Path kubeconfig = AgentIdentity.nodeImpersonation(node.apiServer(), work.resolve("agent.kubeconfig"),
                            node.nodeName(), audiences);
                    return new Agent(agentConfig(work, node, "tokenSource: node-impersonation\n"), kubeconfig);
                });
        started.auditDir = audit;
        return started;
    }

    private static CsiDriverNode start(String test, String agentName, KubeletNode.Builder builder, Install install)
            throws Exception {
        KubeletNode node = builder.start();
        CsiDriverNode started;
        try {
            Figures.record(test, String.format(Locale.ROOT, "node Ready %d ms after the kubelet started",
                    node.readyTime().toMillis()));
            Path work = Files.createTempDirectory("satoken-csi-e2e");
            Agent agent = install.install(node, work);
            started = new CsiDriverNode(node, work, agent.config(), agent.kubeconfig(), "127.0.0.1:" + E2E.freePort());
        } catch (Exception | Error e) {
            node.close();
            throw e;
        }
        try {
            started.agent = started.startAgent(agentName);
            // /readyz includes csi-registered: the kubelet took the registration socket and registered the driver
            awaitTrue("CSINode lists " + DRIVER, Duration.ofSeconds(30), () -> started.drivers().contains(DRIVER));
            return started;
        } catch (Exception | Error e) {
            started.close();
            throw e;
        }
    }

    KubeletNode node() {
        return node;
    }

    /** The agent now running. */
    SatokenProcess agent() {
        return agent;
    }

    /** The API server's audit log (Metadata of every TokenRequest), where {@link #startImpersonating} started it. */
    Path auditLog() {
        return auditDir.resolve("audit.log");
    }

    /** The agent's kubeconfig: its own credential. */
    Path agentKubeconfig() {
        return agentKubeconfig;
    }

    /** The agent's config file, for its {@code explain} command. */
    Path agentConfig() {
        return agentConfig;
    }

    /**
     * Creates a namespace {@code prefix-<random>} enforcing the {@code restricted} Pod Security level (latest) and
     * a ServiceAccount {@code serviceAccount} in it, for the pods of a test; returns the namespace's name.
     */
    String restrictedNamespace(String prefix, String serviceAccount) throws ApiException {
        return namespace(prefix, Map.of("pod-security.kubernetes.io/enforce", "restricted",
                "pod-security.kubernetes.io/enforce-version", "latest"), serviceAccount);
    }

    /** As {@link #restrictedNamespace}, with {@code labels} on the namespace (none: no Pod Security level enforced). */
    String namespace(String prefix, Map<String, String> labels, String serviceAccount) throws ApiException {
        String namespace = node.createNamespace(prefix, labels);
        new CoreV1Api(node.adminClient()).createNamespacedServiceAccount(namespace,
                new V1ServiceAccount().metadata(new V1ObjectMeta().name(serviceAccount))).execute();
        return namespace;
    }

    /** SIGKILLs the agent and starts another on the same kubelet dir and metrics address; returns it once ready. */
    SatokenProcess restartAgent(String agentName) throws IOException {
        agent.kill();
        agent = startAgent(agentName);
        return agent;
    }

    /** The drivers the node's CSINode lists; none when it cannot be read yet. */
    List<String> drivers() {
        try {
            V1CSINode csiNode = new StorageV1Api(node.adminClient()).readCSINode(node.nodeName()).execute();
            return csiNode.getSpec().getDrivers().stream().map(V1CSINodeDriver::getName).toList();
        } catch (ApiException e) {
            return List.of();
        }
    }

    @Override
    public void close() throws IOException {
        node.close(); // deletes the pods first, while the agent still answers the unpublishes
        if (agent != null) {
            agent.close();
        }
        for (Path dir : auditDir == null ? List.of(work) : List.of(work, auditDir)) {
            try (Stream<Path> files = Files.walk(dir)) {
                files.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
            }
        }
    }

    /** Polls {@code condition} every 200 ms until it holds, failing after {@code timeout}. */
    static void awaitTrue(String what, Duration timeout, BooleanSupplier condition) {
        Instant deadline = Instant.now().plus(timeout);
        while (!condition.getAsBoolean()) {
            if (Instant.now().isAfter(deadline)) {
                throw new AssertionError("timed out after " + timeout.toSeconds() + " s waiting until " + what);
            }
            SatokenProcess.pause(Duration.ofMillis(200));
        }
    }

    private SatokenProcess startAgent(String name) throws IOException {
        return SatokenProcess.agent(name, List.of("run", "--config", agentConfig.toString(),
                        "--kubeconfig", agentKubeconfig.toString(), "--node-name", node.nodeName(),
                        "--metrics-address", metricsAddress), metricsAddress, Map.of())
                .awaitReady(AGENT_READY);
    }
}
