package io.satoken.agent.bench;

import io.grpc.Deadline;
import io.grpc.ManagedChannel;
import io.grpc.MethodDescriptor;
import io.grpc.Server;
import io.grpc.ServerServiceDefinition;
import io.grpc.Status;
import io.grpc.netty.shaded.io.grpc.netty.NettyServerBuilder;
import io.grpc.netty.shaded.io.netty.channel.EventLoopGroup;
import io.grpc.netty.shaded.io.netty.channel.MultiThreadIoEventLoopGroup;
import io.grpc.netty.shaded.io.netty.channel.epoll.EpollIoHandler;
import io.grpc.netty.shaded.io.netty.channel.epoll.EpollServerDomainSocketChannel;
import io.grpc.netty.shaded.io.netty.channel.unix.DomainSocketAddress;
import io.grpc.stub.ServerCalls;
import io.kubernetes.client.openapi.models.V1Pod;
import io.kubernetes.client.openapi.models.V1Volume;
import io.satoken.agent.csi.CsiServer;
import io.satoken.agent.csi.wire.InfoRequest;
import io.satoken.agent.csi.wire.NodeGetCapabilitiesRequest;
import io.satoken.agent.csi.wire.NodeGetInfoRequest;
import io.satoken.agent.csi.wire.NodeGrpc;
import io.satoken.agent.csi.wire.NodePublishVolumeRequest;
import io.satoken.agent.csi.wire.PluginInfo;
import io.satoken.agent.csi.wire.RegistrationGrpc;
import io.satoken.agent.csi.wire.RegistrationStatus;
import io.satoken.agent.testing.KubeletCsiClient;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Queue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The kubelet's side of the agent's CSI sockets during a pod burst: it registers the driver, then sets up
 * every pod's inline volume at once, as the kubelet's volume manager does when many pods land on a node.
 *
 * <p>What one volume set-up does, as kubelet v1.26's CSI volume plugin ({@code csiMountMgr.SetUpAt}):
 * <ol>
 *   <li>creates {@code <kubeletDir>/pods/<uid>/volumes/kubernetes.io~csi/<name>} 0750;</li>
 *   <li>NodeGetCapabilities (does the driver apply fsGroup itself?), then NodePublishVolume, which asks
 *       NodeGetCapabilities once more first (the access-mode mapping); each of the three calls on a new
 *       connection to the socket, closed after the call, as the kubelet's CSI client does; all three under
 *       one deadline of 2 min (the kubelet's csiTimeout);</li>
 *   <li>NodePublishVolume carries the volume id {@code csi-<sha256(podUID + volumeName)>}, the target
 *       {@code .../<name>/mount}, a mount capability with access mode SINGLE_NODE_WRITER (inline volumes are
 *       ReadWriteOnce), the volume's readOnly, and its attributes with the pod info a CSIDriver with
 *       {@code podInfoOnMount: true} adds;</li>
 *   <li>after a failure (any status, a deadline included) it is tried again after the kubelet's exponential
 *       backoff for a volume operation: 0.5 s, doubling up to 2 min 2 s. It never gives up on its own.</li>
 * </ol>
 * Not modelled: the kubelet's 100 ms reconciler and populator ticks, which may delay a first attempt or a
 * retry by up to that much; its vol_data.json file.
 *
 * <p>Every NodePublishVolume call is recorded (start, answer, status) for the publish-latency figures.
 */
final class BurstKubelet implements AutoCloseable {

    static final String DRIVER = CsiServer.DRIVER;
    static final Duration CSI_TIMEOUT = Duration.ofMinutes(2);
    static final Duration FIRST_RETRY = Duration.ofMillis(500);
    static final Duration MAX_RETRY = Duration.ofSeconds(122);
    /** sun_path holds 108 bytes with the terminating NUL. */
    private static final int MAX_SOCKET_PATH = 107;

    /** One NodePublishVolume call: when it was sent, when it was answered ({@link System#nanoTime}), how. */
    record Call(long sent, long answered, Status.Code code) {
        double seconds() {
            return (answered - sent) / 1e9;
        }
    }

    private final Path kubeletDir;
    private final Path csiSocket;
    private final Path registrationSocket;
    private final EventLoopGroup loop;
    private final ScheduledExecutorService retries;
    final Queue<Call> publishCalls = new ConcurrentLinkedQueue<>();
    final Queue<Call> capabilityCallTimes = new ConcurrentLinkedQueue<>();
    final AtomicInteger capabilityCalls = new AtomicInteger();
    final AtomicInteger connections = new AtomicInteger();
    final AtomicInteger retried = new AtomicInteger();
    private final AtomicInteger inFlight = new AtomicInteger();
    private volatile long firstAnswer;
    final AtomicInteger maxInFlight = new AtomicInteger();

    BurstKubelet(Path kubeletDir) {
        this.kubeletDir = kubeletDir.toAbsolutePath().normalize();
        this.csiSocket = CsiServer.socketPath(this.kubeletDir);
        this.registrationSocket = this.kubeletDir.resolve("plugins_registry").resolve(DRIVER + "-reg.sock");
        for (Path socket : List.of(csiSocket, registrationSocket)) {
            if (socket.toString().getBytes(StandardCharsets.UTF_8).length > MAX_SOCKET_PATH) {
                throw new IllegalArgumentException("socket path " + socket + " is longer than " + MAX_SOCKET_PATH
                        + " bytes, which a unix socket cannot have: set a shorter TMPDIR");
            }
        }
        this.loop = new MultiThreadIoEventLoopGroup(1, daemon("kubelet-csi-io"), EpollIoHandler.newFactory());
        this.retries = Executors.newSingleThreadScheduledExecutor(daemon("kubelet-csi-retry"));
    }

    /**
     * Loads this driver's own gRPC client before the agent starts, so that the time until the agent's socket
     * answers is the agent's: one GetInfo on a server of this process, on a socket of its own.
     */
    void warmUp() throws IOException, InterruptedException {
        Path dir = Files.createTempDirectory(kubeletDir.getParent(), "warm-up");
        Path socket = dir.resolve("w.sock");
        Server server = NettyServerBuilder.forAddress(new DomainSocketAddress(socket.toString()))
                .channelType(EpollServerDomainSocketChannel.class).bossEventLoopGroup(loop).workerEventLoopGroup(loop)
                .addService(ServerServiceDefinition.builder(RegistrationGrpc.SERVICE_NAME)
                        .addMethod(RegistrationGrpc.getGetInfoMethod(), ServerCalls.asyncUnaryCall((request, answer) -> {
                            answer.onNext(PluginInfo.getDefaultInstance());
                            answer.onCompleted();
                        }))
                        .build())
                .build().start();
        try {
            ManagedChannel channel = KubeletCsiClient.channel(socket, loop);
            KubeletCsiClient.call(channel, RegistrationGrpc.getGetInfoMethod(), InfoRequest.getDefaultInstance(),
                    Deadline.after(10, TimeUnit.SECONDS)).whenComplete((r, e) -> channel.shutdown()).join();
        } finally {
            server.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
            Files.deleteIfExists(socket);
            Files.delete(dir);
        }
    }

    /** When the agent's registration socket first answered (GetInfo), in {@link System#nanoTime}; 0 before. */
    long firstAnswer() {
        return firstAnswer;
    }

    /**
     * What the kubelet's plugin watcher does once the registration socket appears: GetInfo, checked as the
     * kubelet checks it; NodeGetInfo on the endpoint it names; NotifyRegistrationStatus(true).
     *
     * @return the node id the agent reported
     * @param agent the agent's process; waiting stops if it exits
     */
    String register(Process agent, Duration timeout) throws IOException, InterruptedException {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (!Files.exists(registrationSocket)) {
            if (!agent.isAlive()) {
                throw new IllegalStateException("agent exited with " + agent.exitValue() + " before it registered");
            }
            if (System.nanoTime() > deadline) {
                throw new IOException("no registration socket at " + registrationSocket + " within " + timeout);
            }
            Thread.sleep(10);
        }
        PluginInfo info = call(registrationSocket, RegistrationGrpc.getGetInfoMethod(), InfoRequest.getDefaultInstance(),
                Deadline.after(10, TimeUnit.SECONDS)).join();
        firstAnswer = System.nanoTime();
        if (!"CSIPlugin".equals(info.getType()) || !DRIVER.equals(info.getName())
                || !csiSocket.toString().equals(info.getEndpoint())
                || info.getSupportedVersionsList().stream().noneMatch(v -> v.startsWith("1."))) {
            throw new IllegalStateException("the kubelet would refuse the plugin: " + info);
        }
        String nodeId = call(csiSocket, NodeGrpc.getNodeGetInfoMethod(), NodeGetInfoRequest.getDefaultInstance(),
                Deadline.after(CSI_TIMEOUT.toSeconds(), TimeUnit.SECONDS)).join().getNodeId();
        call(registrationSocket, RegistrationGrpc.getNotifyRegistrationStatusMethod(),
                RegistrationStatus.newBuilder().setPluginRegistered(true).build(),
                Deadline.after(10, TimeUnit.SECONDS)).join();
        return nodeId;
    }

    /**
     * Sets up the pod's inline volume as the kubelet does until it succeeds; completes with the
     * {@link System#nanoTime} of the successful answer. The future only fails if this client is closed.
     */
    CompletableFuture<Long> setUpUntilDone(V1Pod pod, V1Volume volume) {
        CompletableFuture<Long> done = new CompletableFuture<>();
        attempt(pod, volume, FIRST_RETRY, done);
        return done;
    }

    /** {@code <kubeletDir>/pods/<podUID>/volumes/kubernetes.io~csi/<volumeName>/mount}, as the kubelet names it. */
    Path targetPath(V1Pod pod, String volumeName) {
        return kubeletDir.resolve("pods").resolve(pod.getMetadata().getUid()).resolve("volumes")
                .resolve("kubernetes.io~csi").resolve(volumeName).resolve("mount");
    }

    @Override
    public void close() {
        retries.shutdownNow();
        loop.shutdownGracefully(0, 1, TimeUnit.SECONDS);
    }

    private void attempt(V1Pod pod, V1Volume volume, Duration backoff, CompletableFuture<Long> done) {
        setUp(pod, volume).whenComplete((answeredAt, error) -> {
            if (error == null) {
                done.complete(answeredAt);
                return;
            }
            if (retries.isShutdown()) {
                done.completeExceptionally(error);
                return;
            }
            retried.incrementAndGet();
            Duration next = backoff.multipliedBy(2).compareTo(MAX_RETRY) > 0 ? MAX_RETRY : backoff.multipliedBy(2);
            retries.schedule(() -> attempt(pod, volume, next, done), backoff.toMillis(), TimeUnit.MILLISECONDS);
        });
    }

    /** One SetUpAt: the volume's directory, two NodeGetCapabilities, NodePublishVolume; see the class comment. */
    private CompletableFuture<Long> setUp(V1Pod pod, V1Volume volume) {
        Path target = targetPath(pod, volume.getName());
        try {
            createKubeletDirs(target.getParent());
        } catch (IOException e) {
            return CompletableFuture.failedFuture(e);
        }
        NodePublishVolumeRequest request = KubeletCsiClient.publishRequest(pod, volume, target);
        Deadline deadline = Deadline.after(CSI_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
        return capabilities(deadline)
                .thenCompose(fsGroupCheck -> capabilities(deadline))
                .thenCompose(accessModeCheck -> publish(request, deadline));
    }

    private CompletableFuture<?> capabilities(Deadline deadline) {
        capabilityCalls.incrementAndGet();
        long sent = System.nanoTime();
        return call(csiSocket, NodeGrpc.getNodeGetCapabilitiesMethod(), NodeGetCapabilitiesRequest.getDefaultInstance(),
                deadline).whenComplete((answer, error) -> capabilityCallTimes.add(new Call(sent, System.nanoTime(),
                        error == null ? Status.Code.OK : Status.fromThrowable(error).getCode())));
    }

    private CompletableFuture<Long> publish(NodePublishVolumeRequest request, Deadline deadline) {
        int now = inFlight.incrementAndGet();
        maxInFlight.accumulateAndGet(now, Math::max);
        long sent = System.nanoTime();
        return call(csiSocket, NodeGrpc.getNodePublishVolumeMethod(), request, deadline).handle((answer, error) -> {
            long answered = System.nanoTime();
            inFlight.decrementAndGet();
            publishCalls.add(new Call(sent, answered, error == null ? Status.Code.OK : Status.fromThrowable(error).getCode()));
            if (error != null) {
                throw error instanceof RuntimeException r ? r : new IllegalStateException(error);
            }
            return answered;
        });
    }

    /** One unary call on a connection of its own, closed once answered, as the kubelet's CSI client makes them. */
    private <Q, R> CompletableFuture<R> call(Path socket, MethodDescriptor<Q, R> method, Q request, Deadline deadline) {
        connections.incrementAndGet();
        ManagedChannel channel = KubeletCsiClient.channel(socket, loop);
        return KubeletCsiClient.call(channel, method, request, deadline).whenComplete((r, e) -> channel.shutdown());
    }

    /** The kubelet creates a volume's directory, and the pod's above it, 0750 before it publishes. */
    private void createKubeletDirs(Path volumeDir) throws IOException {
        Path pods = Files.createDirectories(kubeletDir.resolve("pods"));
        Path dir = pods;
        for (Path name : pods.relativize(volumeDir)) {
            dir = dir.resolve(name);
            try {
                Files.createDirectory(dir, PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwxr-x---")));
            } catch (FileAlreadyExistsException e) {
                // a retry
            }
        }
    }

    private static ThreadFactory daemon(String name) {
        return r -> {
            Thread t = new Thread(r, name);
            t.setDaemon(true);
            return t;
        };
    }
}
