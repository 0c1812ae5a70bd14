package io.satoken.agent.testing;

import io.grpc.CallOptions;
import io.grpc.Deadline;
import io.grpc.ManagedChannel;
import io.grpc.MethodDescriptor;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.grpc.netty.shaded.io.netty.channel.ChannelOption;
import io.grpc.netty.shaded.io.netty.channel.EventLoopGroup;
import io.grpc.netty.shaded.io.netty.channel.MultiThreadIoEventLoopGroup;
import io.grpc.netty.shaded.io.netty.channel.epoll.EpollDomainSocketChannel;
import io.grpc.netty.shaded.io.netty.channel.epoll.EpollIoHandler;
import io.grpc.netty.shaded.io.netty.channel.unix.DomainSocketAddress;
import io.grpc.stub.ClientCalls;
import io.grpc.stub.StreamObserver;
import io.kubernetes.client.openapi.models.V1CSIVolumeSource;
import io.kubernetes.client.openapi.models.V1Pod;
import io.kubernetes.client.openapi.models.V1Volume;
import io.satoken.agent.csi.CsiServer;
import io.satoken.agent.csi.wire.InfoRequest;
import io.satoken.agent.csi.wire.NodeGetInfoRequest;
import io.satoken.agent.csi.wire.NodeGrpc;
import io.satoken.agent.csi.wire.NodePublishVolumeRequest;
import io.satoken.agent.csi.wire.NodeUnpublishVolumeRequest;
import io.satoken.agent.csi.wire.PluginInfo;
import io.satoken.agent.csi.wire.RegistrationGrpc;
import io.satoken.agent.csi.wire.RegistrationStatus;
import io.satoken.agent.csi.wire.VolumeCapability;
import io.satoken.common.testing.MountTable;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Duration;
import java.time.Instant;
import java.util.EnumMap;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The kubelet's side of the agent's CSI sockets, for the tests that run no kubelet: a real gRPC client on
 * {@code <kubeletDir>/plugins/tokens.satoken.io/csi.sock} and on the registration socket, making the calls
 * the kubelet makes, with the values it sends.
 *
 * <ul>
 *   <li>{@link #register}: what the kubelet's plugin watcher does once the registration socket appears:
 *       GetInfo, NodeGetInfo on the endpoint it names, NotifyRegistrationStatus(true). The agent is ready
 *       ({@code /readyz}) only after that.</li>
 *   <li>{@link #publish}: NodePublishVolume of one inline volume of a pod, with the volume id the kubelet
 *       derives ({@code csi-<sha256(podUID + volumeName)>}), the target path
 *       {@code <kubeletDir>/pods/<podUID>/volumes/kubernetes.io~csi/<volumeName>/mount} (its parent created
 *       0750 first, as the kubelet does), a mount capability, and the volume's attributes with the pod info
 *       that a CSIDriver with {@code podInfoOnMount: true} adds, written over any the pod gave.</li>
 *   <li>{@link #publishUntilDone}: the same, retried after a failure or a timeout with the kubelet's backoff
 *       (0.5 s, doubling up to 2 min 2 s), as the kubelet's volume manager does until a pod's volumes are
 *       set up. Many can run at once, as when a node gets a burst of pods.</li>
 *   <li>{@link #unpublish}: NodeUnpublishVolume, as on the pod's deletion. (The kubelet then removes the
 *       volume's directory itself; this client leaves that out, so tests see what the agent removed.)</li>
 * </ul>
 * Every call has the kubelet's 2 min deadline. {@link #close()} also unmounts whatever is still mounted under
 * the kubelet directory (a stopped agent leaves its tmpfs mounts for the next one to adopt), so the test's
 * temporary directory can be deleted; tests that publish are marked {@code RequiresMounts}.
 */
public final class KubeletCsiClient implements AutoCloseable {

    public static final String DRIVER = CsiServer.DRIVER;
    /** The kubelet's csiTimeout for each CSI call. */
    public static final Duration CALL_TIMEOUT = Duration.ofMinutes(2);
    /** The kubelet's exponential backoff for a volume operation that failed. */
    public static final Duration FIRST_RETRY = Duration.ofMillis(500);
    public static final Duration MAX_RETRY = Duration.ofSeconds(122);
    /** sun_path holds 108 bytes with the terminating NUL. */
    private static final int MAX_SOCKET_PATH = 107;

    private final Path kubeletDir;
    private final EventLoopGroup loop;
    private final ManagedChannel csi;
    private final ScheduledExecutorService retries;
    private final Map<Status.Code, AtomicInteger> failures = new EnumMap<>(Status.Code.class);

    private KubeletCsiClient(Path kubeletDir, EventLoopGroup loop, ManagedChannel csi, ScheduledExecutorService retries) {
        this.kubeletDir = kubeletDir;
        this.loop = loop;
        this.csi = csi;
        this.retries = retries;
    }

    /** The agent process serving the kubelet directory, as {@link #register} watches it. */
    public interface PluginProcess {
        boolean isAlive();

        /** Why it stopped, with its log's last lines. */
        String exitReport();
    }

    /** What the agent said when it registered. */
    public record Registration(String name, String endpoint, List<String> versions, String nodeId) {}

    /** A client for the agent serving the kubelet directory {@code kubeletDir}; it connects on the first call. */
    public static KubeletCsiClient open(Path kubeletDir) {
        Path dir = kubeletDir.toAbsolutePath().normalize();
        for (Path socket : List.of(CsiServer.socketPath(dir), registrationSocket(dir))) {
            if (socket.toString().getBytes(StandardCharsets.UTF_8).length > MAX_SOCKET_PATH) {
                throw new IllegalArgumentException("socket path " + socket + " is longer than " + MAX_SOCKET_PATH
                        + " bytes, which a unix socket cannot have: use a shorter kubeletDir");
            }
        }
        EventLoopGroup loop = new MultiThreadIoEventLoopGroup(1, daemon("kubelet-csi-io"), EpollIoHandler.newFactory());
        ScheduledExecutorService retries = Executors.newSingleThreadScheduledExecutor(daemon("kubelet-csi-retry"));
        return new KubeletCsiClient(dir, loop, channel(CsiServer.socketPath(dir), loop), retries);
    }

    /**
     * Registers the driver as the kubelet's plugin watcher does, once the agent's registration socket exists:
     * GetInfo, checked as the kubelet checks it (a CSIPlugin named tokens.satoken.io, a 1.x version, its
     * endpoint the CSI socket), NodeGetInfo, then NotifyRegistrationStatus(true).
     *
     * @param agent the agent process serving this directory; waiting stops at once if it exits
     */
    public Registration register(PluginProcess agent, Duration timeout) throws IOException {
        Path socket = registrationSocket(kubeletDir);
        Instant deadline = Instant.now().plus(timeout);
        ManagedChannel registration = channel(socket, loop);
        try {
            PluginInfo info = null;
            while (info == null) {
                try {
                    info = Files.exists(socket) ? await(call(registration, RegistrationGrpc.getGetInfoMethod(),
                            InfoRequest.getDefaultInstance(), Duration.ofSeconds(5))) : null;
                } catch (StatusRuntimeException e) {
                    if (e.getStatus().getCode() != Status.Code.UNAVAILABLE || Instant.now().isAfter(deadline)) {
                        throw e;
                    }
                }
                if (info == null) {
                    if (!agent.isAlive()) {
                        throw new AssertionError(agent.exitReport());
                    }
                    if (Instant.now().isAfter(deadline)) {
                        throw new IOException("no registration socket answered at " + socket + " within "
                                + timeout.toSeconds() + " s");
                    }
                    pause(Duration.ofMillis(50));
                }
            }
            String refused = !"CSIPlugin".equals(info.getType()) ? "type " + info.getType() + ", not CSIPlugin"
                    : !DRIVER.equals(info.getName()) ? "name " + info.getName() + ", not " + DRIVER
                    : !CsiServer.socketPath(kubeletDir).toString().equals(info.getEndpoint())
                            ? "endpoint " + info.getEndpoint() + ", not " + CsiServer.socketPath(kubeletDir)
                    : info.getSupportedVersionsList().stream().noneMatch(v -> v.startsWith("1."))
                            ? "versions " + info.getSupportedVersionsList() + ", none 1.x" : null;
            if (refused != null) {
                await(call(registration, RegistrationGrpc.getNotifyRegistrationStatusMethod(), RegistrationStatus.newBuilder()
                        .setPluginRegistered(false).setError(refused).build(), CALL_TIMEOUT));
                throw new AssertionError("the kubelet would refuse the plugin: " + refused);
            }
            csi.resetConnectBackoff(); // the plugin may be a new process on the same socket, as after a restart
            String nodeId = await(call(csi, NodeGrpc.getNodeGetInfoMethod(), NodeGetInfoRequest.getDefaultInstance(),
                    CALL_TIMEOUT)).getNodeId();
            await(call(registration, RegistrationGrpc.getNotifyRegistrationStatusMethod(),
                    RegistrationStatus.newBuilder().setPluginRegistered(true).build(), CALL_TIMEOUT));
            return new Registration(info.getName(), info.getEndpoint(), info.getSupportedVersionsList(), nodeId);
        } finally {
            registration.shutdownNow();
        }
    }

    /** An inline volume of the agent's driver, read-only, with these attributes: what a pod spec would hold. */
    public static V1Volume volume(String name, Map<String, String> attributes) {
        return new V1Volume().name(name).csi(new V1CSIVolumeSource().driver(DRIVER).readOnly(true)
                .volumeAttributes(attributes));
    }

    /**
     * One NodePublishVolume of {@code volume} for {@code pod}, waited for.
     *
     * @return the target path, where the files are once this returns
     * @throws StatusRuntimeException the agent's answer when it is not OK
     */
    public Path publish(V1Pod pod, V1Volume volume) {
        try {
            return publishAsync(pod, volume).join();
        } catch (CompletionException e) {
            if (e.getCause() instanceof StatusRuntimeException s) {
                throw s;
            }
            throw e;
        }
    }

    /** {@link #publish(V1Pod, V1Volume)} of {@code volume(volumeName, attributes)}. */
    public Path publish(V1Pod pod, String volumeName, Map<String, String> attributes) {
        return publish(pod, volume(volumeName, attributes));
    }

    /** One NodePublishVolume, not waited for; completes with the target path or the agent's error status. */
    public CompletableFuture<Path> publishAsync(V1Pod pod, V1Volume volume) {
        V1CSIVolumeSource source = volume.getCsi();
        if (source == null || !DRIVER.equals(source.getDriver())) {
            throw new IllegalArgumentException("volume " + volume.getName() + " is not a CSI volume of " + DRIVER
                    + ", so the kubelet would not send it to the agent");
        }
        Path target = targetPath(pod, volume.getName());
        try {
            createKubeletDirs(target.getParent());
        } catch (IOException e) {
            return CompletableFuture.failedFuture(new UncheckedIOException(e));
        }
        NodePublishVolumeRequest request = publishRequest(pod, volume, target);
        return call(csi, NodeGrpc.getNodePublishVolumeMethod(), request, CALL_TIMEOUT).thenApply(answer -> target);
    }

    /**
     * The NodePublishVolume the kubelet sends for {@code volume} of {@code pod} at {@code target}: its volume
     * id, a mount capability, and the volume's attributes with the pod info written over them.
     */
    public static NodePublishVolumeRequest publishRequest(V1Pod pod, V1Volume volume, Path target) {
        V1CSIVolumeSource source = volume.getCsi();
        Map<String, String> context = new TreeMap<>();
        if (source.getVolumeAttributes() != null) {
            context.putAll(source.getVolumeAttributes());
        }
        context.putAll(podInfo(pod));
        return NodePublishVolumeRequest.newBuilder()
                .setVolumeId(volumeId(pod.getMetadata().getUid(), volume.getName()))
                .setTargetPath(target.toString())
                .setVolumeCapability(VolumeCapability.newBuilder()
                        .setMount(VolumeCapability.MountVolume.getDefaultInstance())
                        .setAccessMode(VolumeCapability.AccessMode.newBuilder()
                                .setMode(VolumeCapability.AccessMode.Mode.SINGLE_NODE_WRITER)))
                .setReadonly(Boolean.TRUE.equals(source.getReadOnly()))
                .putAllVolumeContext(context)
                .build();
    }

    /**
     * Publishes as the kubelet does until it succeeds: after a failure or a timeout, again after the
     * kubelet's backoff, until {@code giveUp}; the future fails with the last error after that.
     */
    public CompletableFuture<Path> publishUntilDone(V1Pod pod, V1Volume volume, Instant giveUp) {
        CompletableFuture<Path> done = new CompletableFuture<>();
        attempt(pod, volume, giveUp, FIRST_RETRY, done);
        return done;
    }

    /** NodeUnpublishVolume of the pod's volume, as on the pod's deletion. */
    public void unpublish(V1Pod pod, String volumeName) {
        await(call(csi, NodeGrpc.getNodeUnpublishVolumeMethod(), NodeUnpublishVolumeRequest.newBuilder()
                .setVolumeId(volumeId(pod.getMetadata().getUid(), volumeName))
                .setTargetPath(targetPath(pod, volumeName).toString()).build(), CALL_TIMEOUT));
    }

    /** {@code <kubeletDir>/pods/<podUID>/volumes/kubernetes.io~csi/<volumeName>/mount}, as the kubelet names it. */
    public Path targetPath(V1Pod pod, String volumeName) {
        return kubeletDir.resolve("pods").resolve(pod.getMetadata().getUid()).resolve("volumes")
                .resolve("kubernetes.io~csi").resolve(volumeName).resolve("mount");
    }

    /** The kubelet's id of an inline CSI volume: {@code csi-} and the hex SHA-256 of the pod's uid and the volume's name. */
    public static String volumeId(String podUid, String volumeName) {
        try {
            byte[] hash = MessageDigest.getInstance("SHA-256")
                    .digest((podUid + volumeName).getBytes(StandardCharsets.UTF_8));
            return "csi-" + HexFormat.of().formatHex(hash);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }

    /** How many publishes failed and were tried again, by the agent's status code. */
    public Map<Status.Code, Integer> retriedFailures() {
        synchronized (failures) {
            Map<Status.Code, Integer> copy = new EnumMap<>(Status.Code.class);
            failures.forEach((code, n) -> copy.put(code, n.get()));
            return copy;
        }
    }

    /** Closes the connection, then unmounts everything still mounted under the kubelet directory. */
    @Override
    public void close() {
        csi.shutdownNow();
        try {
            csi.awaitTermination(5, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        retries.shutdownNow();
        loop.shutdownGracefully(0, 1, TimeUnit.SECONDS);
        try {
            List<MountTable.Mount> left = MountTable.unmountAll(kubeletDir).left();
            if (!left.isEmpty()) {
                System.err.println("*** e2e: still mounted under " + kubeletDir + " after unmounting: " + left + " ***");
            }
        } catch (IOException e) {
            System.err.println("*** e2e: could not unmount under " + kubeletDir + ": " + e + " ***");
        }
    }

    /** What a CSIDriver with podInfoOnMount: true has the kubelet add to an inline volume's attributes. */
    private static Map<String, String> podInfo(V1Pod pod) {
        String serviceAccount = pod.getSpec().getServiceAccountName();
        return Map.of(
                "csi.storage.k8s.io/pod.name", pod.getMetadata().getName(),
                "csi.storage.k8s.io/pod.namespace", pod.getMetadata().getNamespace(),
                "csi.storage.k8s.io/pod.uid", pod.getMetadata().getUid(),
                "csi.storage.k8s.io/serviceAccount.name", serviceAccount == null ? "" : serviceAccount,
                "csi.storage.k8s.io/ephemeral", "true");
    }

    private void attempt(V1Pod pod, V1Volume volume, Instant giveUp, Duration backoff, CompletableFuture<Path> done) {
        publishAsync(pod, volume).whenComplete((target, error) -> {
            if (error == null) {
                done.complete(target);
                return;
            }
            Status.Code code = Status.fromThrowable(error).getCode();
            if (Instant.now().plus(backoff).isAfter(giveUp) || retries.isShutdown()) {
                done.completeExceptionally(error);
                return;
            }
            synchronized (failures) {
                failures.computeIfAbsent(code, c -> new AtomicInteger()).incrementAndGet();
            }
            Duration next = backoff.multipliedBy(2).compareTo(MAX_RETRY) > 0 ? MAX_RETRY : backoff.multipliedBy(2);
            retries.schedule(() -> attempt(pod, volume, giveUp, next, done), backoff.toMillis(), TimeUnit.MILLISECONDS);
        });
    }

    /** The kubelet creates a volume's directory, and the pod's above it, 0750 before it publishes. */
    private void createKubeletDirs(Path volumeDir) throws IOException {
        Path pods = Files.createDirectories(kubeletDir.resolve("pods"));
        Path dir = pods;
        for (Path name : pods.relativize(volumeDir)) {
            dir = dir.resolve(name);
            try {
                Files.createDirectory(dir, PosixFilePermissions.asFileAttribute(
                        PosixFilePermissions.fromString("rwxr-x---")));
            } catch (FileAlreadyExistsException e) {
                // another volume of the pod, or a retry
            }
        }
    }

    private static <Q, R> CompletableFuture<R> call(ManagedChannel channel, MethodDescriptor<Q, R> method, Q request,
            Duration timeout) {
        return call(channel, method, request, Deadline.after(timeout.toMillis(), TimeUnit.MILLISECONDS));
    }

    /** One unary call; the future fails with the call's StatusRuntimeException. */
    public static <Q, R> CompletableFuture<R> call(ManagedChannel channel, MethodDescriptor<Q, R> method, Q request,
            Deadline deadline) {
        CompletableFuture<R> result = new CompletableFuture<>();
        ClientCalls.asyncUnaryCall(channel.newCall(method, CallOptions.DEFAULT.withDeadline(deadline)), request,
                new StreamObserver<>() {
                    @Override
                    public void onNext(R value) {
                        result.complete(value);
                    }

                    @Override
                    public void onError(Throwable t) {
                        result.completeExceptionally(t);
                    }

                    @Override
                    public void onCompleted() {
                        if (!result.isDone()) {
                            result.completeExceptionally(Status.INTERNAL.withDescription("no answer").asRuntimeException());
                        }
                    }
                });
        return result;
    }

    private static <R> R await(CompletableFuture<R> call) {
        try {
            return call.join();
        } catch (CompletionException e) {
            if (e.getCause() instanceof StatusRuntimeException s) {
                throw s;
            }
            throw e;
        }
    }

    /** A plaintext gRPC channel on the unix socket {@code socket}, as the kubelet opens one. */
    public static ManagedChannel channel(Path socket, EventLoopGroup loop) {
        return NettyChannelBuilder.forAddress(new DomainSocketAddress(socket.toString()))
                .channelType(EpollDomainSocketChannel.class)
                .eventLoopGroup(loop)
                .usePlaintext()
                .overrideAuthority("localhost") // what Go's gRPC, and so the kubelet, sends on a unix socket
                .withOption(ChannelOption.SO_KEEPALIVE, null) // gRPC's TCP default; a unix socket has none
                .build();
    }

    private static Path registrationSocket(Path kubeletDir) {
        return kubeletDir.resolve("plugins_registry").resolve(DRIVER + "-reg.sock");
    }

    private static java.util.concurrent.ThreadFactory daemon(String name) {
        return r -> {
            Thread t = new Thread(r, name);
            t.setDaemon(true);
            return t;
        };
    }

    private static void pause(Duration d) {
        try {
            Thread.sleep(d.toMillis());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted", e);
        }
    }
}
