package io.satoken.e2e.node;

import io.satoken.common.testing.KubeApiServer;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import java.util.stream.Stream;

/**
 * The node's kubelet (from {@link KubeApiServer#assetsDir()}: v1.26.1 by default): a
 * {@code KubeletConfiguration} file for this machine, a kubeconfig with the node's client certificate, its
 * root dir and certificates under the node's directory, and containerd's socket as its runtime.
 *
 * <p>Chosen for a test node on a shared machine: {@code failSwapOn: false}; the cgroupfs driver (no systemd
 * here); {@code protectKernelDefaults: false} (it then rewrites some sysctls, see {@link KernelSettings});
 * no iptables chains; no static pods, read-only port or healthz port; x509 client authentication against
 * the node CA and {@code AlwaysAllow} authorization (only the API server and the kubelet itself hold
 * certificates of that CA);
 * image GC off and eviction thresholds at 1%, so a busy disk cannot evict or delete the test's images. The
 * server listens on a free port of the address the node name resolves to.
 *
 * <p>Outside its directories the kubelet still writes {@code /var/lib/kubelet/device-plugins} (hard-coded in
 * v1.26), {@code /var/log/pods}, {@code /var/log/containers} and the {@code kubepods} cgroups; see
 * {@link HostLeftovers}.
 */
final class Kubelet {

    private static final Duration STOP_GRACE = Duration.ofSeconds(15);
    private static volatile int minorVersion = -1;

    private final Path dir;
    private final String nodeName;
    private final Map<String, String> config = new LinkedHashMap<>();
    private NodeProcess process;

    /**
     * @param dir       the node's directory; the kubelet's root dir is {@code dir/kubelet}
     * @param address   the IP the node name resolves to, where the API server will reach the kubelet
     * @param overrides top-level {@code KubeletConfiguration} fields, as YAML flow values, replacing defaults
     */
    Kubelet(Path dir, String nodeName, String address, int port, Path clientCa, Map<String, String> overrides) {
        this.dir = dir;
        this.nodeName = nodeName;
        config.put("address", address);
        config.put("port", Integer.toString(port));
        config.put("readOnlyPort", "0");
        config.put("healthzPort", "0");
        config.put("authentication", "{anonymous: {enabled: false}, webhook: {enabled: false}, x509: {clientCAFile: \""
                + clientCa + "\"}}");
        config.put("authorization", "{mode: AlwaysAllow}");
        config.put("cgroupDriver", "cgroupfs");
        config.put("failSwapOn", "false");
        config.put("protectKernelDefaults", "false");
        config.put("makeIPTablesUtilChains", "false");

        config.put("hairpinMode", "none");
        config.put("serializeImagePulls", "false");
        config.put("imageGCHighThresholdPercent", "100");
        config.put("imageGCLowThresholdPercent", "99");
        config.put("evictionHard", "{memory.available: 1Mi, nodefs.available: 1%, nodefs.inodesFree: 1%,"
                + " imagefs.available: 1%}");
        config.put("rotateCertificates", "false");
        config.put("serverTLSBootstrap", "false");
        config.put("registerNode", "true");
        // the FlexVolume directory, else /usr/libexec/kubernetes/kubelet-plugins/volume/exec is created
        config.put("volumePluginDir", "\"" + dir.resolve("kubelet-volume-plugins") + "\"");
        config.putAll(overrides);
    }

    /**
     * The kubelet's minor version, from {@code kubelet --version} ({@code Kubernetes v1.36.2}): the flags and
     * fields it takes differ by version. 0 when it cannot be read.
     */
    static int minorVersion() {
        if (minorVersion < 0) {
            minorVersion = binary().map(Kubelet::readMinorVersion).orElse(0);
        }
        return minorVersion;
    }

    private static int readMinorVersion(Path kubelet) {
        try {
            Process p = new ProcessBuilder(kubelet.toString(), "--version").redirectErrorStream(true).start();
            String out = new String(p.getInputStream().readAllBytes(), java.nio.charset.StandardCharsets.UTF_8);
            p.waitFor();
            Matcher m = Pattern.compile("v1\\.(\\d+)\\.").matcher(out);
            return m.find() ? Integer.parseInt(m.group(1)) : 0;
        } catch (IOException e) {
            return 0;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return 0;
        }
    }

    /** {@code kubelet} in {@code $KUBEBUILDER_ASSETS}, when it is there. */
    static Optional<Path> binary() {
        Path kubelet = KubeApiServer.assetsDir().resolve("kubelet");
        return Files.isExecutable(kubelet) ? Optional.of(kubelet) : Optional.empty();
    }

    /** The kubelet's {@code --root-dir}: pods, volumes, {@code plugins}, {@code plugins_registry}. */
    Path rootDir() {
        return dir.resolve("kubelet");
    }

    /** Writes its files and starts it; readiness is the node's Ready condition, awaited by the caller. */
    void start(KubeApiServer server, NodeCertificates.Pair clientCert, Path containerdSocket) throws IOException {
        Files.createDirectories(rootDir());
        if (minorVersion() >= 31) {
            config.putIfAbsent("failCgroupV1", "false"); // from 1.35 a cgroup v1 host (this one) is refused unless asked
        }
        Path configFile = dir.resolve("kubelet-config.yaml");
        Files.writeString(configFile, "apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\n"
                + config.entrySet().stream().map(e -> e.getKey() + ": " + e.getValue() + "\n")
                        .collect(Collectors.joining()));
        Path kubeconfig = dir.resolve("kubelet.kubeconfig");
        Files.writeString(kubeconfig, """
                apiVersion: v1
                kind: Config
                clusters:
                - name: test
                  cluster:
                    server: %s
                    certificate-authority: %s
                users:
                - name: %s
                  user:
                    client-certificate: %s
                    client-key: %s
                contexts:
                - name: node
                  context:
                    cluster: test
                    user: %s
                current-context: node
                """.formatted(server.url(), server.servingCertificate(), nodeName, clientCert.cert(),
                clientCert.key(), nodeName));
        process = NodeProcess.start("kubelet", Stream.of(
                binary().orElseThrow(() -> new IOException("kubelet not found in " + KubeApiServer.assetsDir()))
                        .toString(),
                "--config=" + configFile,
                "--kubeconfig=" + kubeconfig,
                "--root-dir=" + rootDir(),
                "--cert-dir=" + dir.resolve("kubelet-pki"),
                "--hostname-override=" + nodeName,
                "--container-runtime-endpoint=unix://" + containerdSocket,
                // gone in 1.35, where containerd's sandbox_image (the same image) is the only setting
                minorVersion() >= 35 ? null : "--pod-infra-container-image=" + TestImages.PAUSE,
                // each pod's sync steps, and never a token at this level (SecretsHygieneE2E reads this log)
                "--v=2").filter(Objects::nonNull).toList());
    }

    NodeProcess process() {
        return process;
    }

    String tail() {
        return process == null ? "" : process.tail();
    }

    /** SIGTERM to the kubelet's pid (SIGKILL after 15 s); the containers it started keep running. */
    void stop() {
        if (process != null) {
            process.stop(STOP_GRACE);
        }
    }
}
