package io.satoken.e2e;

import io.kubernetes.client.openapi.ApiException;
import io.kubernetes.client.openapi.apis.CoreV1Api;
import io.kubernetes.client.openapi.apis.StorageV1Api;
import io.kubernetes.client.openapi.models.V1CSINode;
import io.kubernetes.client.openapi.models.V1CSINodeDriver;
import io.kubernetes.client.openapi.models.V1ObjectMeta;
import io.kubernetes.client.openapi.models.V1ServiceAccount;
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
        return start(test, agentName, KubeletNode.builder(), "",
                (node, file) -> AgentIdentity.kubeconfig(node.apiServer(), file));
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
        Path policy = Files.writeString(audit.resolve("policy.yaml"), """
                apiVersion: audit.k8s.io/v1
                kind: Policy
                omitStages: [RequestReceived]
                rules:
                  - level: Metadata
                    resources:
                      - group: ""
                        resources: [serviceaccounts/token]
                  - level: None
                """);
        CsiDriverNode started = start(test, agentName, KubeletNode.builder().apiServer(b -> b
                        .flag("--enable-admission-plugins", "NodeRestriction")
                        .flag("--audit-policy-file", policy.toString())
                        .flag("--audit-log-path", audit.resolve("audit.log").toString())),
                "tokenSource: node-impersonation\n",
                (node, file) -> AgentIdentity.nodeImpersonation(node.apiServer(), file, node.nodeName(), audiences));
        started.auditDir = audit;
        return started;
    }

    /** Gives the agent its credential on a started node: writes its kubeconfig to the file and returns it. */
    interface Identity {
        Path kubeconfig(KubeletNode node, Path file) throws Exception;
    }

    private static CsiDriverNode start(String test, String agentName, KubeletNode.Builder builder, String moreConfig,
            Identity identity) throws Exception {
        KubeletNode node = builder.start();
        CsiDriverNode started;
        try {
            Figures.record(test, String.format(Locale.ROOT, "node Ready %d ms after the kubelet started",
                    node.readyTime().toMillis()));
            Path work = Files.createTempDirectory("satoken-csi-e2e");
            Manifests.apply(node.apiServer(), E2E.repo().resolve("agent/deploy/25-csidriver.yaml"));
            Path kubeconfig = identity.kubeconfig(node, work.resolve("agent.kubeconfig"));
            Path config = Files.writeString(work.resolve("agent.yaml"), "mode: csi\nkubeletDir: " + node.rootDir() + "\n"
                    + moreConfig);
            started = new CsiDriverNode(node, work, config, kubeconfig, "127.0.0.1:" + E2E.freePort());
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
