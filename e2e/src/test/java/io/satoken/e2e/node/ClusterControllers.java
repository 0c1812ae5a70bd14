package io.satoken.e2e.node;

import io.satoken.common.testing.KubeApiServer;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * What turns a DaemonSet or a Deployment into pods on a {@link KubeletNode}: kube-controller-manager with only
 * its DaemonSet, Deployment, ReplicaSet and node lifecycle controllers, and kube-scheduler, both v1.26 from
 * {@code $KUBEBUILDER_ASSETS}, as the API server's admin, without leader election or a serving port. The
 * ServiceAccount controllers stay off: satoken's control plane replaces them, and the tests deploy it.
 */
public final class ClusterControllers implements AutoCloseable {

    private static final List<String> BINARIES = List.of("kube-controller-manager", "kube-scheduler");
    private static final Duration STOP_GRACE = Duration.ofSeconds(15);

    private final List<NodeProcess> processes = new ArrayList<>();

    private ClusterControllers() {
    }

    /** Why they cannot run here ("kube-scheduler not found in ..."), or empty when they can. */
    public static Optional<String> unavailableReason() {
        for (String binary : BINARIES) {
            if (!Files.isExecutable(KubeApiServer.assetsDir().resolve(binary))) {
                return Optional.of(binary + " not found in " + KubeApiServer.assetsDir());
            }
        }
        return Optional.empty();
    }

    /** Starts both against {@code server}; their kubeconfig (the admin's token) goes in {@code dir}. */
    public static ClusterControllers start(KubeApiServer server, Path dir) throws IOException {
        Path kubeconfig = dir.resolve("controllers.kubeconfig");
        server.writeKubeconfig(kubeconfig, server.adminToken());
        ClusterControllers controllers = new ClusterControllers();
        try {
            controllers.processes.add(NodeProcess.start("kube-controller-manager", List.of(
                    KubeApiServer.assetsDir().resolve("kube-controller-manager").toString(),
                    "--kubeconfig=" + kubeconfig,
                    // nodelifecycle takes off the not-ready taint a kubelet registers with
                    "--controllers=daemonset,deployment,replicaset,nodelifecycle",
                    "--leader-elect=false",
                    "--secure-port=0",
                    "--use-service-account-credentials=false",
                    "--v=1")));
            controllers.processes.add(NodeProcess.start("kube-scheduler", List.of(
                    KubeApiServer.assetsDir().resolve("kube-scheduler").toString(),
                    "--kubeconfig=" + kubeconfig,
                    "--leader-elect=false",
                    "--secure-port=0",
                    "--v=1")));
        } catch (IOException | RuntimeException e) {
            controllers.close();
            throw e;
        }
        return controllers;
    }

    /** Fails, with the log's tail, when either has exited. */
    public void checkAlive() throws IOException {
        for (NodeProcess p : processes) {
            if (!p.isAlive()) {
                throw new IOException("exited early\n" + p.tail());
            }
        }
    }

    /** SIGTERM to each pid (SIGKILL after 15 s). */
    @Override
    public void close() {
        for (NodeProcess p : processes) {
            p.stop(STOP_GRACE);
        }
    }
}
