package io.satoken.e2e.node;

import io.satoken.common.testing.KubeApiServer;
import java.io.IOException;
import java.math.BigInteger;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.Set;
import java.util.stream.Collectors;

/**
 * Whether this machine can run a test node, and if not, why — in one sentence for the loud skip line.
 * Needs: Linux, root with CAP_SYS_ADMIN (mounts, namespaces, cgroups), kubelet, kube-apiserver and etcd,
 * containerd/runc/CNI plugins, busybox-static and gcc (for the images), no other kubelet running, and a
 * hostname that resolves (the API server reaches the kubelet by the node's name).
 */
final class NodePrerequisites {

    private static final int CAP_SYS_ADMIN = 21;

    private NodePrerequisites() {
    }

    /** Why a node cannot run here, or empty when it can. */
    static Optional<String> missing() {
        if (!System.getProperty("os.name", "").toLowerCase(Locale.ROOT).contains("linux")) {
            return Optional.of("not Linux");
        }
        try {
            if (((Number) Files.getAttribute(Path.of("/proc/self"), "unix:uid")).intValue() != 0) {
                return Optional.of("not root (a kubelet and containerd need root)");
            }
            if (!hasCapability(CAP_SYS_ADMIN)) {
                return Optional.of("no CAP_SYS_ADMIN (containers need mount rights)");
            }
        } catch (IOException | UnsupportedOperationException e) {
            return Optional.of("cannot tell the user and capabilities: " + e.getMessage());
        }
        if (Kubelet.binary().isEmpty()) {
            return Optional.of("kubelet not found in $KUBEBUILDER_ASSETS (" + KubeApiServer.assetsDir() + ")");
        }
        if (KubeApiServer.binaryDir().isEmpty()) {
            return Optional.of("kube-apiserver not found in $KUBEBUILDER_ASSETS (" + KubeApiServer.assetsDir() + ")");
        }
        if (KubeApiServer.etcdBinary().isEmpty()) {
            return Optional.of("etcd not found (Debian: etcd-server)");
        }
        Optional<String> runtime = Containerd.missing();
        if (runtime.isPresent()) {
            return runtime;
        }
        if (!Files.isExecutable(TestImages.BUSYBOX_BINARY)) {
            return Optional.of(TestImages.BUSYBOX_BINARY + " not found (Debian: busybox-static)");
        }
        for (String program : List.of("gcc", "ip", "umount")) {
            if (!HostCommand.available(program)) {
                return Optional.of(program + " not found on PATH");
            }
        }
        if (!Files.isDirectory(Path.of("/sys/fs/cgroup"))) {
            return Optional.of("no /sys/fs/cgroup");
        }
        Set<ProcessHandle> ours = ProcessHandle.current().descendants().collect(Collectors.toSet());
        Optional<ProcessHandle> otherKubelet = ProcessHandle.allProcesses()
                .filter(p -> !ours.contains(p))
                .filter(p -> p.info().command().map(c -> c.endsWith("/kubelet")).orElse(false))
                .findFirst();
        if (otherKubelet.isPresent()) {
            ProcessHandle other = otherKubelet.get();
            boolean leftByTest = other.info().commandLine().map(c -> c.contains("/satoken-node-")).orElse(false);
            return Optional.of("a kubelet already runs here (pid " + other.pid() + ")"
                    + (leftByTest ? ", left by a test run that was killed: kill it and its containerd" : "")
                    + "; a second one would share /var/lib/kubelet/device-plugins with it");
        }
        try {
            nodeAddress();
        } catch (UnknownHostException e) {
            return Optional.of("the hostname " + nodeName() + " does not resolve (add it to /etc/hosts)");
        }
        return Optional.empty();
    }

    /** The machine's hostname, lowercased: node names are DNS subdomains. */
    static String nodeName() {
        try {
            return KernelSettings.read(Path.of("/proc/sys/kernel/hostname")).toLowerCase(Locale.ROOT);
        } catch (IOException e) {
            throw new IllegalStateException("cannot read the hostname", e);
        }
    }

    /** The address the node name resolves to: the kubelet listens there, and the API server dials it. */
    static InetAddress nodeAddress() throws UnknownHostException {
        return InetAddress.getByName(nodeName());
    }

    private static boolean hasCapability(int bit) throws IOException {
        for (String line : Files.readAllLines(Path.of("/proc/self/status"))) {
            if (line.startsWith("CapEff:")) {
                return new BigInteger(line.substring("CapEff:".length()).strip(), 16).testBit(bit);
            }
        }
        return false;
    }
}
