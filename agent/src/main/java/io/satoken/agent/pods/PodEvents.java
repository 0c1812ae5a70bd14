package io.satoken.agent.pods;

import io.kubernetes.client.openapi.models.V1ObjectMeta;
import io.kubernetes.client.openapi.models.V1Pod;
import io.satoken.agent.projection.PodIdentity;
import io.satoken.agent.projection.Projection;
import io.satoken.agent.projection.TokenDirectory;
import io.satoken.agent.reads.ReadTracker;
import io.satoken.agent.refresh.RefreshListener;
import io.satoken.agent.reload.ReloadNotifier;
import io.satoken.agent.token.TokenInfo;
import io.satoken.agent.token.TokenKey;
import io.satoken.agent.token.TokenSourceException;
import java.nio.file.Path;
import java.util.Optional;

/**
 * The Warning Events a pod gets about its token files: a refresh that fails, a token from the node's future, a
 * rotated token its reader does not re-read, and then still holds close to its expiry. Each is told of a
 * {@link TokenDirectory}, and goes to the pod the directory carries ({@link TokenDirectory#pod}); a directory of no
 * pod (static mode) gets none. As a {@link RefreshListener} it hears of refreshes that fail after a directory's first
 * write (before it, the failure is the publish's, which the kubelet reports); the read tracker and the clock check
 * tell it of the rest.
 */
public final class PodEvents implements RefreshListener {

    private final PodEventSink events;
    private final ReloadNotifier reloads;

    /** @param reloads the reload signals sent, which a {@code TokenNotReread} Event names; null when none are sent */
    public PodEvents(PodEventSink events, ReloadNotifier reloads) {
        this.events = events;
        this.reloads = reloads;
    }

    /** A directory's token could not be refreshed; {@code serving}: the current one stays until it expires. */
    @Override
    public void refreshFailed(TokenDirectory dir, TokenKey key, TokenSourceException error, boolean serving) {
        if (dir.pod() == null) {
            return;
        }
        String paths = dir.projections().stream().filter(p -> p.key().equals(key)).map(Projection::path)
                .toList().toString();
        events.warning(podObject(dir.pod()), PodEventSink.TOKEN_REQUEST_FAILED, "token for " + paths
                + ": " + error.getMessage() + (serving ? " (the current token stays in place until it expires)" : ""));
    }

    /** A token written to {@code dir} was issued ahead of this node's clock. */
    public void clockSkew(TokenDirectory dir, Projection projection, TokenInfo info) {
        if (dir.pod() == null) {
            return;
        }
        events.warning(podObject(dir.pod()), PodEventSink.TOKEN_CLOCK_SKEW, "token for "
                + projection.path() + " was issued at " + info.issuedAt()
                + (info.notBefore() == null ? "" : " (nbf " + info.notBefore() + ")")
                + ", ahead of this node's clock; check time synchronisation on node and API server");
    }

    /**
     * The pod has not opened a token file since its token rotated: a client that read it once and keeps the old
     * token, which fails when that token expires.
     */
    public void notReread(ReadTracker.Finding finding) {
        TokenDirectory dir = finding.dir();
        if (dir.pod() == null) {
            return;
        }
        Optional<ReloadNotifier.Last> signal = reloads == null ? Optional.empty() : reloads.last(dir.name());
        events.warning(podObject(dir.pod()), PodEventSink.TOKEN_NOT_REREAD, "token file \""
                + finding.projection().path() + "\"" + ofVolume(dir) + " was rotated at "
                + finding.rotatedAt() + " and not opened since; the pod "
                + (finding.lastRead() == null ? "read it before" : "last read it at " + finding.lastRead())
                + " and still holds a token that expires at " + finding.heldExpiresAt()
                + ". Clients must re-read the file when it changes, as with kubelet's projected tokens"
                + signal.filter(last -> !last.at().isBefore(finding.rotatedAt())).map(PodEvents::signalled)
                        .orElse(""));
    }

    /**
     * The pod was reported not re-reading and still holds its old token within the margin of that token's expiry:
     * the louder report, on which an operator acts before the outage.
     */
    public void expiringUnread(ReadTracker.Finding finding) {
        TokenDirectory dir = finding.dir();
        if (dir.pod() == null) {
            return;
        }
        events.warning(podObject(dir.pod()), PodEventSink.TOKEN_EXPIRING_UNREAD, "token file \""
                + finding.projection().path() + "\"" + ofVolume(dir) + " was rotated at "
                + finding.rotatedAt() + " and is still not opened; the token the pod holds expires at "
                + finding.heldExpiresAt() + ", after which its requests with it fail. Restart the pod or make it re-read"
                + " the file");
    }

    /** What the Event says of the reload signal sent after the rotation. */
    private static String signalled(ReloadNotifier.Last last) {
        return last.delivered()
                ? ". The agent sent " + last.signal() + " to container " + last.container() + " at " + last.at()
                        + ", after the rotation: it was signalled, and did not re-read"
                : ". The agent's " + last.signal() + " to container " + last.container() + " at " + last.at()
                        + " was not delivered: " + last.problem();
    }

    /** The volume's name in the pod's spec: the kubelet's target is {@code .../volumes/kubernetes.io~csi/NAME/mount}. */
    private static String ofVolume(TokenDirectory dir) {
        Path parent = dir.dir().getParent();
        Path volume = parent == null ? null : parent.getFileName();
        return volume == null ? "" : " of volume \"" + volume + "\"";
    }

    /** Enough of a pod for an Event to name it. */
    private static V1Pod podObject(PodIdentity pod) {
        return new V1Pod().metadata(new V1ObjectMeta().namespace(pod.namespace()).name(pod.name()).uid(pod.uid()));
    }
}
