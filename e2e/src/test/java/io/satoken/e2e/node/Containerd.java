package io.satoken.e2e.node;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;

/**
 * The node's own containerd (Debian's package), isolated from any other on the machine: its root, state,
 * runc state and gRPC socket live under one directory, its CRI streaming server takes a free loopback port,
 * and network namespaces are mounted under its state directory. Configured for this machine:
 *
 * <ul>
 *   <li>{@code restrict_oom_score_adj}: root here lacks CAP_SYS_RESOURCE, so runc cannot set the negative
 *       {@code oom_score_adj} the kubelet asks for; containerd clamps it to its own instead.
 *   <li>runc with {@code SystemdCgroup = false}: the kubelet uses the cgroupfs driver.
 *   <li>the sandbox image is {@link TestImages#PAUSE}, imported before the kubelet starts.
 * </ul>
 */
final class Containerd {

    static final String NAMESPACE = "k8s.io";
    private static final Duration START_TIMEOUT = Duration.ofSeconds(30);
    private static final Duration STOP_GRACE = Duration.ofSeconds(10);

    private final Path dir;
    private final Path socket;
    private final CniNetwork network;
    private NodeProcess process;

    Containerd(Path dir, CniNetwork network) {
        this.dir = dir;
        this.socket = dir.resolve("containerd.sock");
        this.network = network;
    }

    /** Whether containerd, ctr and the runc and CNI binaries it needs are installed; else what is missing. */
    static Optional<String> missing() {
        for (String program : List.of("containerd", "ctr", "runc", "containerd-shim-runc-v2")) {
            if (!HostCommand.available(program)) {
                return Optional.of(program + " not found on PATH (Debian: containerd, runc)");
            }
        }
        for (String plugin : List.of("bridge", "host-local", "loopback")) {
            if (!Files.isExecutable(CniNetwork.PLUGINS.resolve(plugin))) {
                return Optional.of(CniNetwork.PLUGINS.resolve(plugin)
                        + " not found (Debian: containernetworking-plugins)");
            }
        }
        return Optional.empty();
    }

    /** Writes the config, starts containerd and waits until its CRI plugin is loaded. */
    void start() throws IOException {
        Path config = dir.resolve("config.toml");
        Files.createDirectories(dir);
        Files.writeString(config, config());
        process = NodeProcess.start("containerd", List.of("containerd", "--config", config.toString()));
        process.awaitReady("loaded CRI plugin", this::criLoaded, START_TIMEOUT);
    }

    /** {@code ctr images import} into the CRI namespace; returns ctr's output. */
    String importImage(Path archive) throws IOException {
        return ctr("images", "import", archive.toString());
    }

    /** {@code ctr -n k8s.io --address <socket> args...}; fails with its output unless it exits 0. */
    String ctr(String... args) throws IOException {
        String[] command = new String[args.length + 5];
        command[0] = "ctr";
        command[1] = "--address";
        command[2] = socket.toString();
        command[3] = "--namespace";
        command[4] = NAMESPACE;
        System.arraycopy(args, 0, command, 5, args.length);
        return HostCommand.check(command);
    }

    Path socket() {
        return socket;
    }

    Path log() {
        return process == null ? null : process.log();
    }

    String tail() {
        return process == null ? "" : process.tail();
    }

    /** SIGTERM to containerd's pid (SIGKILL after 10 s); its shims keep running, see {@link #killShims}. */
    void stop() {
        if (process != null) {
            process.stop(STOP_GRACE);
        }
    }

    /**
     * Kills the shims this containerd started, and the container processes under each (a killed shim's
     * children would otherwise be re-parented and live on). A shim is ours when its command line names our
     * socket ({@code -address <socket>}); other containerds' shims are left alone.
     */
    void killShims() {
        List<ProcessHandle> shims = ProcessHandle.allProcesses()
                .filter(p -> p.info().commandLine().map(c -> c.contains("containerd-shim")
                        && c.contains(socket.toString())).orElse(false))
                .toList();
        if (shims.isEmpty()) {
            return;
        }
        List<ProcessHandle> doomed = new ArrayList<>();
        for (ProcessHandle shim : shims) {
            shim.descendants().forEach(doomed::add);
            doomed.add(shim);
        }
        doomed.forEach(ProcessHandle::destroyForcibly);
        // their cgroups and mounts can only go once they are gone
        for (ProcessHandle p : doomed) {
            p.onExit().completeOnTimeout(p, 10, TimeUnit.SECONDS).join();
        }
        System.err.println("node: killed " + shims.size() + " containerd shim(s) left running, and "
                + (doomed.size() - shims.size()) + " process(es) under them");
    }

    private boolean criLoaded() throws IOException {
        if (!Files.exists(socket)) {
            return false;
        }
        // "io.containerd.grpc.v1  cri  linux/amd64  ok"; "error" when the plugin failed to load
        for (String line : ctr("plugins", "ls").lines().toList()) {
            String[] f = line.trim().split("\\s+");
            if (f.length >= 3 && f[0].equals("io.containerd.grpc.v1") && f[1].equals("cri")) {
                if (!f[f.length - 1].equals("ok")) {
                    throw new IllegalStateException("containerd's CRI plugin did not load: " + line.trim());
                }
                return true;
            }
        }
        return false;
    }

    private String config() {
        Path root = dir.resolve("root");
        Path state = dir.resolve("state");
        return """
                # The test node's containerd; see Containerd.java for why each setting is here.
                version = 2
                root = "%s"
                state = "%s"
                disabled_plugins = [
                  "io.containerd.snapshotter.v1.aufs",
                  "io.containerd.snapshotter.v1.btrfs",
                  "io.containerd.snapshotter.v1.zfs",
                  "io.containerd.snapshotter.v1.devmapper",
                  "io.containerd.tracing.processor.v1.otlp",
                  "io.containerd.internal.v1.tracing",
                ]

                [grpc]
                  address = "%s"

                [plugins."io.containerd.internal.v1.opt"]
                  path = "%s"

                [plugins."io.containerd.grpc.v1.cri"]
                  sandbox_image = "%s"
                  restrict_oom_score_adj = true
                  stream_server_address = "127.0.0.1"
                  stream_server_port = "0"
                  netns_mounts_under_state_dir = true
                  enable_selinux = false

                  [plugins."io.containerd.grpc.v1.cri".containerd]
                    snapshotter = "overlayfs"
                    default_runtime_name = "runc"

                    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
                      runtime_type = "io.containerd.runc.v2"

                      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
                        SystemdCgroup = false
                        Root = "%s"

                  [plugins."io.containerd.grpc.v1.cri".cni]
                    bin_dir = "%s"
                    conf_dir = "%s"
                """.formatted(root, state, socket, dir.resolve("opt"), TestImages.PAUSE, dir.resolve("runc"),
                CniNetwork.PLUGINS, network.confDir());
    }
}
