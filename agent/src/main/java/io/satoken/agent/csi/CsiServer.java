package io.satoken.agent.csi;

import com.google.protobuf.BoolValue;
import io.grpc.Server;
import io.grpc.ServerServiceDefinition;
import io.grpc.Status;
import io.grpc.netty.shaded.io.grpc.netty.NettyServerBuilder;
import io.grpc.netty.shaded.io.netty.channel.ChannelOption;
import io.grpc.netty.shaded.io.netty.channel.EventLoopGroup;
import io.grpc.netty.shaded.io.netty.channel.epoll.EpollEventLoopGroup;
import io.grpc.netty.shaded.io.netty.channel.epoll.EpollServerDomainSocketChannel;
import io.grpc.netty.shaded.io.netty.channel.unix.DomainSocketAddress;
import io.grpc.stub.ServerCalls;
import io.satoken.agent.csi.wire.GetPluginCapabilitiesResponse;
import io.satoken.agent.csi.wire.GetPluginInfoResponse;
import io.satoken.agent.csi.wire.IdentityGrpc;
import io.satoken.agent.csi.wire.NodeGetCapabilitiesResponse;
import io.satoken.agent.csi.wire.NodeGetInfoResponse;
import io.satoken.agent.csi.wire.NodeGrpc;
import io.satoken.agent.csi.wire.NodeUnpublishVolumeResponse;
import io.satoken.agent.csi.wire.PluginInfo;
import io.satoken.agent.csi.wire.ProbeResponse;
import io.satoken.agent.csi.wire.RegistrationGrpc;
import io.satoken.agent.csi.wire.RegistrationStatusResponse;
import io.satoken.common.kube.Failures;
import io.satoken.common.projection.CsiVolumeAttributes;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BiConsumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The agent as a CSI node plugin: the Identity and Node services on {@code <kubeletDir>/plugins/<driver>/csi.sock},
 * and the kubelet's plugin-registration service on {@code <kubeletDir>/plugins_registry/<driver>-reg.sock},
 * which is how the kubelet finds the driver without a node-driver-registrar sidecar.
 *
 * <p>Both sockets are 0600 and their directories 0750, owned by the agent's user: only root (the kubelet)
 * can connect. A publish waits for its volume's first token without holding a thread; calls the driver
 * does not serve answer UNIMPLEMENTED.
 */
public final class CsiServer implements AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(CsiServer.class);

    public static final String DRIVER = CsiVolumeAttributes.DRIVER;
    static final String CSI_VERSION = "1.0.0";
    /** The kubelet gives NodePublishVolume two minutes; answering before that lets it retry sooner. */
    static final Duration PUBLISH_WAIT = Duration.ofSeconds(90);

    private final Path csiSocket;
    private final Path registrationSocket;
    private final String nodeName;
    private final String version;
    private final CsiVolumes volumes;
    private final BiConsumer<Duration, String> publishes;
    private final io.kubernetes.client.openapi.ApiClient warmUp;
    private final AtomicBoolean registered = new AtomicBoolean();
    private EventLoopGroup loop;
    private ExecutorService handlers;
    private Server csi;
    private Server registration;

    /**
     * @param kubeletDir the kubelet's root directory
     * @param version the agent's version, reported in GetPluginInfo
     * @param publishes told how long each NodePublishVolume took and how it ended ({@code success} or a status code)
     * @param warmUp a client to warm up before the first publish arrives ({@link Warmup}), or null
     */
    public CsiServer(Path kubeletDir, String nodeName, String version, CsiVolumes volumes,
            BiConsumer<Duration, String> publishes, io.kubernetes.client.openapi.ApiClient warmUp) {
        this.csiSocket = socketPath(kubeletDir);
        this.registrationSocket = kubeletDir.resolve("plugins_registry").resolve(DRIVER + "-reg.sock");
        this.nodeName = nodeName;
        this.version = version;
        this.volumes = volumes;
        this.publishes = publishes;
        this.warmUp = warmUp;
    }

    /** Where the CSI services listen: {@code <kubeletDir>/plugins/tokens.satoken.io/csi.sock}. */
    public static Path socketPath(Path kubeletDir) {
        return kubeletDir.resolve("plugins").resolve(DRIVER).resolve("csi.sock");
    }

    /** Starts both servers: the CSI socket first, so the kubelet finds it when the registration asks. */
    public synchronized void start() throws IOException {
        if (warmUp != null) {
            Warmup.start(warmUp);
        }
        loop = new EpollEventLoopGroup(1, daemonThreads("satoken-csi-io"));
        AtomicInteger n = new AtomicInteger();
        // publish and unpublish read the API and run mount; a few threads, queued beyond that
        ThreadPoolExecutor pool = new ThreadPoolExecutor(4, 4, 60, TimeUnit.SECONDS, new LinkedBlockingQueue<>(), r -> {
            Thread t = new Thread(r, "satoken-csi-" + n.incrementAndGet());
            t.setDaemon(true);
            return t;
        });
        // the kubelet calls in bursts (pods starting) and otherwise rarely: no thread waits past a minute idle
        pool.allowCoreThreadTimeOut(true);
        handlers = pool;
        csi = serve(csiSocket, identity(), node());
        registration = serve(registrationSocket, registrationService());
        log.info("CSI driver {} serving on {}; registering through {}", DRIVER, csiSocket, registrationSocket);
    }

    /** Whether the kubelet has said it registered the driver. */
    public boolean registered() {
        return registered.get();
    }

    public Path csiSocket() {
        return csiSocket;
    }

    public Path registrationSocket() {
        return registrationSocket;
    }

    /** Stops serving and removes the registration socket, so the kubelet unregisters the driver. */
    @Override
    public synchronized void close() {
        for (Server server : new Server[] {registration, csi}) {
            if (server != null) {
                server.shutdownNow();
            }
        }
        try {
            Files.deleteIfExists(registrationSocket);
            Files.deleteIfExists(csiSocket);
        } catch (IOException e) {
            log.warn("removing the CSI sockets failed: {}", Failures.inWords(e));
        }
        if (handlers != null) {
            handlers.shutdownNow();
        }
        if (loop != null) {
            loop.shutdownGracefully(0, 1, TimeUnit.SECONDS);
        }
    }

    private Server serve(Path socket, ServerServiceDefinition... services) throws IOException {
        Files.createDirectories(socket.getParent());
        Files.setPosixFilePermissions(socket.getParent(), PosixFilePermissions.fromString("rwxr-x---"));
        Files.deleteIfExists(socket); // left by an agent that was killed
        NettyServerBuilder builder = NettyServerBuilder.forAddress(new DomainSocketAddress(socket.toString()))
                .channelType(EpollServerDomainSocketChannel.class)
                .bossEventLoopGroup(loop)
                .workerEventLoopGroup(loop)
                .executor(handlers)
                // gRPC sets TCP keepalive on every connection; a unix socket has none, and netty warns on each one
                .withChildOption(ChannelOption.SO_KEEPALIVE, null)
                .maxInboundMessageSize(1024 * 1024);
        for (ServerServiceDefinition service : services) {
            builder.addService(service);
        }
        Server server = builder.build().start();
        Files.setPosixFilePermissions(socket, PosixFilePermissions.fromString("rw-------"));
        return server;
    }

    private ServerServiceDefinition identity() {
        return ServerServiceDefinition.builder(IdentityGrpc.SERVICE_NAME)
                .addMethod(IdentityGrpc.getGetPluginInfoMethod(), answer(request -> GetPluginInfoResponse.newBuilder()
                        .setName(DRIVER).setVendorVersion(version).build()))
                // no Controller service: the volumes are inline, nothing is provisioned or attached
                .addMethod(IdentityGrpc.getGetPluginCapabilitiesMethod(),
                        answer(request -> GetPluginCapabilitiesResponse.getDefaultInstance()))
                .addMethod(IdentityGrpc.getProbeMethod(), answer(request -> ProbeResponse.newBuilder()
                        .setReady(BoolValue.of(true)).build()))
                .build();
    }

    private ServerServiceDefinition node() {
        return ServerServiceDefinition.builder(NodeGrpc.SERVICE_NAME)
                // no STAGE_UNSTAGE_VOLUME: the kubelet calls NodePublishVolume directly
                .addMethod(NodeGrpc.getNodeGetCapabilitiesMethod(),
                        answer(request -> NodeGetCapabilitiesResponse.getDefaultInstance()))
                .addMethod(NodeGrpc.getNodeGetInfoMethod(), answer(request -> NodeGetInfoResponse.newBuilder()
                        .setNodeId(nodeName).build()))
                .addMethod(NodeGrpc.getNodePublishVolumeMethod(), ServerCalls.asyncUnaryCall(new PublishCall(volumes, publishes)::answer))
                .addMethod(NodeGrpc.getNodeUnpublishVolumeMethod(), answer(request -> {
                    volumes.unpublish(request.getVolumeId(), request.getTargetPath());
                    return NodeUnpublishVolumeResponse.getDefaultInstance();
                }))
                .build();
    }

    private ServerServiceDefinition registrationService() {
        return ServerServiceDefinition.builder(RegistrationGrpc.SERVICE_NAME)
                .addMethod(RegistrationGrpc.getGetInfoMethod(), answer(request -> PluginInfo.newBuilder()
                        .setType("CSIPlugin").setName(DRIVER).setEndpoint(csiSocket.toString())
                        .addSupportedVersions(CSI_VERSION).build()))
                .addMethod(RegistrationGrpc.getNotifyRegistrationStatusMethod(), answer(status -> {
                    registered.set(status.getPluginRegistered());
                    if (status.getPluginRegistered()) {
                        log.info("the kubelet registered CSI driver {}", DRIVER);
                    } else {
                        log.error("the kubelet refused to register CSI driver {}: {}", DRIVER, status.getError());
                    }
                    return RegistrationStatusResponse.getDefaultInstance();
                }))
                .build();
    }

    /** A handler that may fail with a {@link CsiException}. */
    @FunctionalInterface
    private interface Handler<Q, R> {
        R handle(Q request) throws CsiException;
    }

    private static <Q, R> io.grpc.ServerCallHandler<Q, R> answer(Handler<Q, R> handler) {
        return ServerCalls.asyncUnaryCall((request, response) -> {
            try {
                response.onNext(handler.handle(request));
                response.onCompleted();
            } catch (CsiException e) {
                response.onError(e.status().asRuntimeException());
            } catch (RuntimeException e) {
                log.error("CSI call failed", e);
                response.onError(Status.INTERNAL.withDescription(Failures.inWords(e)).asRuntimeException());
            }
        });
    }

    private static java.util.concurrent.ThreadFactory daemonThreads(String name) {
        return r -> {
            Thread t = new Thread(r, name);
            t.setDaemon(true);
            return t;
        };
    }
}
