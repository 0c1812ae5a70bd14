package io.satoken.agent.csi;

import io.kubernetes.client.openapi.models.V1ObjectMeta;
import io.kubernetes.client.openapi.models.V1Pod;
import io.satoken.agent.pods.PodEventSink;
import io.satoken.agent.projection.PodIdentity;
import io.satoken.agent.projection.Projection;
import io.satoken.agent.projection.TokenDirectory;
import io.satoken.agent.reads.ReadTracker;
import io.satoken.agent.reload.ReloadNotifier;
import io.satoken.agent.token.TokenInfo;
import io.satoken.agent.token.TokenKey;
import io.satoken.agent.token.TokenSourceException;
import java.nio.file.Path;
import java.util.Optional;

/** The Warning Events a published volume's pod gets: its token's refresh failing, and a token from the node's future. */
final class VolumeEvents {

    private final PodEventSink events;

    VolumeEvents(PodEventSink events) {
        this.events = events;
    }

    /** A published volume's token could not be refreshed; {@code serving}: the current one stays until it expires. */
    void refreshFailed(PodIdentity pod, TokenDirectory dir, TokenKey key, TokenSourceException error,
            boolean serving) {
        String paths = dir.projections().stream().filter(p -> p.key().equals(key)).map(Projection::path)
                .toList().toString();
        events.warning(podObject(pod), PodEventSink.TOKEN_REQUEST_FAILED, "token for " + paths
                + ": " + error.getMessage() + (serving ? " (the current token stays in place until it expires)" : ""));
    }

    /** A token written for the pod was issued ahead of this node's clock. */
    void clockSkew(PodIdentity pod, Projection projection, TokenInfo info) {
        events.warning(podObject(pod), PodEventSink.TOKEN_CLOCK_SKEW, "token for "
                + projection.path() + " was issued at " + info.issuedAt()
                + (info.notBefore() == null ? "" : " (nbf " + info.notBefore() + ")")
                + ", ahead of this node's clock; check time synchronisation on node and API server");
    }

    /**
     * The pod has not opened a token file since its token rotated: a client that read it once and keeps the old
     * token, which fails when that token expires.
     */
    void notReread(PodIdentity pod, Path target, ReadTracker.Finding finding, Optional<ReloadNotifier.Last> signal) {
        Path volume = target.getParent() == null ? null : target.getParent().getFileName();
        events.warning(podObject(pod), PodEventSink.TOKEN_NOT_REREAD, "token file \"" + finding.projection().path()
                + "\"" + (volume == null ? "" : " of volume \"" + volume + "\"") + " was rotated at "
                + finding.rotatedAt() + " and not opened since; the pod "
                + (finding.lastRead() == null ? "read it before" : "last read it at " + finding.lastRead())
                + " and still holds a token that expires at " + finding.heldExpiresAt()
                + ". Clients must re-read the file when it changes, as with kubelet's projected tokens"
                + signal.filter(last -> !last.at().isBefore(finding.rotatedAt())).map(VolumeEvents::signalled)
                        .orElse(""));
    }

    /** What the Event says of the reload signal sent after the rotation. */
    private static String signalled(ReloadNotifier.Last last) {
        return last.delivered()
                ? ". The agent sent " + last.signal() + " to container " + last.container() + " at " + last.at()
                        + ", after the rotation: it was signalled, and did not re-read"
                : ". The agent's " + last.signal() + " to container " + last.container() + " at " + last.at()
                        + " was not delivered: " + last.problem();
    }

    /**
     * The pod was reported not re-reading and still holds its old token within the margin of that token's expiry:
     * the louder report, on which an operator acts before the outage.
     */
    void expiringUnread(PodIdentity pod, Path target, ReadTracker.Finding finding) {
        Path volume = target.getParent() == null ? null : target.getParent().getFileName();
        events.warning(podObject(pod), PodEventSink.TOKEN_EXPIRING_UNREAD, "token file \"" + finding.projection().path()
                + "\"" + (volume == null ? "" : " of volume \"" + volume + "\"") + " was rotated at "
                + finding.rotatedAt() + " and is still not opened; the token the pod holds expires at "
                + finding.heldExpiresAt() + ", after which its requests with it fail. Restart the pod or make it re-read"
                + " the file");
    }

    /** Enough of a pod for an Event to name it. */
    private static V1Pod podObject(PodIdentity pod) {
        return new V1Pod().metadata(new V1ObjectMeta().namespace(pod.namespace()).name(pod.name()).uid(pod.uid()));
    }
}
