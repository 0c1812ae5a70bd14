package io.satoken.agent.csi;

import io.grpc.Status;
import io.grpc.stub.StreamObserver;
import io.satoken.common.kube.Failures;
import io.satoken.common.projection.CsiVolumeAttributes;
import io.satoken.agent.csi.wire.NodePublishVolumeRequest;
import io.satoken.agent.csi.wire.NodePublishVolumeResponse;
import java.time.Duration;
import java.util.Locale;
import java.util.concurrent.CompletionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.BiConsumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * NodePublishVolume: answers once the volume's first token is written, or UNAVAILABLE after
 * {@link CsiServer#PUBLISH_WAIT} so the kubelet retries; tells how long each call took and how it ended.
 */
final class PublishCall {

    /** The server's logger: these lines are the CSI server's, as before the split. */
    private static final Logger log = LoggerFactory.getLogger(CsiServer.class);

    private final CsiVolumes volumes;
    private final BiConsumer<Duration, String> publishes;

    PublishCall(CsiVolumes volumes, BiConsumer<Duration, String> publishes) {
        this.volumes = volumes;
        this.publishes = publishes;
    }

    /** Starts the publish and answers when it completes; never blocks the calling thread. */
    void answer(NodePublishVolumeRequest request, StreamObserver<NodePublishVolumeResponse> observer) {
        long start = System.nanoTime();
        StreamObserver<NodePublishVolumeResponse> response = new StreamObserver<>() {
            @Override
            public void onNext(NodePublishVolumeResponse value) {
                observer.onNext(value);
            }

            @Override
            public void onError(Throwable t) {
                publishes.accept(Duration.ofNanos(System.nanoTime() - start),
                        Status.fromThrowable(t).getCode().name().toLowerCase(Locale.ROOT));
                observer.onError(t);
            }

            @Override
            public void onCompleted() {
                publishes.accept(Duration.ofNanos(System.nanoTime() - start), "success");
                observer.onCompleted();
            }
        };
        try {
            if (!request.hasVolumeCapability() || !request.getVolumeCapability().hasMount()) {
                throw new CsiException(Status.Code.INVALID_ARGUMENT,
                        "volume_capability: must be a mount volume; tokens.satoken.io has no block volumes");
            }
            if (!request.getReadonly()) {
                // A writable volume would let the pod plant links and files where the agent, as root, writes,
                // chmods and deletes at every refresh: the volume is the agent's to write, the pod's to read.
                throw new CsiException(Status.Code.INVALID_ARGUMENT, "csi.readOnly: must be true: "
                        + CsiVolumeAttributes.DRIVER + " volumes are read-only for the pod; set readOnly: true on the"
                        + " pod's csi volume");
            }
            volumes.publish(request.getVolumeId(), request.getTargetPath(), request.getVolumeContextMap(),
                            request.getSecretsMap())
                    .orTimeout(CsiServer.PUBLISH_WAIT.toSeconds(), TimeUnit.SECONDS)
                    .whenComplete((done, error) -> {
                        if (error == null) {
                            response.onNext(NodePublishVolumeResponse.getDefaultInstance());
                            response.onCompleted();
                        } else {
                            response.onError(statusOf(request.getVolumeId(), error).asRuntimeException());
                        }
                    });
        } catch (CsiException e) {
            response.onError(e.status().asRuntimeException());
        } catch (RuntimeException e) {
            log.error("NodePublishVolume of {} failed", request.getVolumeId(), e);
            response.onError(internal(request.getVolumeId(), e).asRuntimeException());
        }
    }

    private static Status statusOf(String volumeId, Throwable error) {
        Throwable cause = error instanceof CompletionException && error.getCause() != null ? error.getCause() : error;
        if (cause instanceof CsiException e) {
            return e.status();
        }
        if (cause instanceof TimeoutException) {
            return Status.UNAVAILABLE.withDescription("volume " + volumeId + ": still waiting for its first token after "
                    + CsiServer.PUBLISH_WAIT.toSeconds() + " s (TokenRequests are rate-limited); the kubelet will retry");
        }
        return internal(volumeId, cause);
    }

    /** An unexpected failure, for the kubelet's FailedMount Event: the volume and what went wrong, in words. */
    static Status internal(String volumeId, Throwable cause) {
        return Status.INTERNAL.withDescription("volume " + volumeId + ": " + Failures.inWords(cause));
    }
}
