package io.satoken.agent.testing;

import io.grpc.CallOptions;
import io.grpc.ManagedChannel;
import io.grpc.MethodDescriptor;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.grpc.netty.shaded.io.netty.channel.EventLoopGroup;
import io.grpc.netty.shaded.io.netty.channel.epoll.EpollDomainSocketChannel;
import io.grpc.netty.shaded.io.netty.channel.epoll.EpollEventLoopGroup;
import io.grpc.netty.shaded.io.netty.channel.unix.DomainSocketAddress;
import io.grpc.stub.ClientCalls;
import io.satoken.agent.csi.wire.NodePublishVolumeRequest;
import io.satoken.agent.csi.wire.NodeUnpublishVolumeRequest;
import io.satoken.agent.csi.wire.VolumeCapability;
import java.nio.file.Path;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * Calls the agent's gRPC services over their unix socket as the kubelet does: one blocking unary call at a
 * time, each with a deadline so a test that hangs fails instead.
 */
public final class CsiClient implements AutoCloseable {

    private static final long DEADLINE_SECONDS = 30;

    private final EventLoopGroup loop = new EpollEventLoopGroup(1);
    private final ManagedChannel channel;

    public CsiClient(Path socket) {
        channel = NettyChannelBuilder.forAddress(new DomainSocketAddress(socket.toString()))
                .channelType(EpollDomainSocketChannel.class)
                .eventLoopGroup(loop)
                .usePlaintext()
                .build();
    }

    /** @throws io.grpc.StatusRuntimeException with the server's status when the call fails */
    public <Q, R> R call(MethodDescriptor<Q, R> method, Q request) {
        return ClientCalls.blockingUnaryCall(channel, method,
                CallOptions.DEFAULT.withDeadlineAfter(DEADLINE_SECONDS, TimeUnit.SECONDS), request);
    }

    /** A NodePublishVolumeRequest as the kubelet sends one for an inline volume: a read-only mount. */
    public static NodePublishVolumeRequest publishRequest(String volumeId, Path target, Map<String, String> attributes) {
        return NodePublishVolumeRequest.newBuilder()
                .setVolumeId(volumeId)
                .setTargetPath(target.toString())
                .setVolumeCapability(VolumeCapability.newBuilder()
                        .setMount(VolumeCapability.MountVolume.getDefaultInstance())
                        .setAccessMode(VolumeCapability.AccessMode.newBuilder()
                                .setMode(VolumeCapability.AccessMode.Mode.SINGLE_NODE_READER_ONLY)))
                .setReadonly(true)
                .putAllVolumeContext(attributes)
                .build();
    }

    public static NodeUnpublishVolumeRequest unpublishRequest(String volumeId, Path target) {
        return NodeUnpublishVolumeRequest.newBuilder().setVolumeId(volumeId).setTargetPath(target.toString()).build();
    }

    @Override
    public void close() throws InterruptedException {
        channel.shutdownNow();
        channel.awaitTermination(5, TimeUnit.SECONDS);
        loop.shutdownGracefully(0, 1, TimeUnit.SECONDS).await(5, TimeUnit.SECONDS);
    }
}
