package io.satoken.agent.runtime;

import io.micrometer.core.instrument.MeterRegistry;
import io.satoken.agent.config.AgentConfig;
import io.satoken.agent.csi.PublishedVolume;
import io.satoken.agent.csi.VolumeStore;
import io.satoken.agent.pods.PodEvents;
import io.satoken.agent.projection.TokenDirectory;
import io.satoken.agent.reads.ConsumerReads;
import io.satoken.agent.reads.ReadMetrics;
import io.satoken.agent.reads.ReadTracker;
import io.satoken.agent.refresh.RefreshScheduler;
import io.satoken.agent.refresh.TaskScheduler;
import io.satoken.agent.reload.ReloadNotifier;
import io.satoken.agent.status.StatusEndpoint;
import io.satoken.common.kube.Failures;
import java.io.IOException;
import java.nio.file.Path;
import java.time.InstantSource;
import java.util.List;
import java.util.Optional;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What the agent tells operators about its files' readers: the read watching ({@link ConsumerReads}) and what it
 * reports (a log line, and a {@code TokenNotReread} Event when the file is a pod's), which files have readers
 * (kept in the volumes' records, so that a restart does not forget them), and the status endpoint {@code explain}
 * reads. None of it is needed to write a token: a part that cannot start says so and the agent goes on.
 */
final class Diagnostics implements AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(Diagnostics.class);

    private final AgentConfig config;
    private final String node;
    private final InstantSource clock;
    private final ConsumerReads reads;
    /** The pods' Warning Events; null outside CSI mode. */
    private final PodEvents events;
    /** The volumes' records; null outside CSI mode. */
    private final VolumeStore store;
    private StatusEndpoint status;

    /**
     * @param events sends a pod's Warning Events, about the pod its directory carries; null when no directory is a
     *     pod's (static mode)
     * @param store the CSI volumes' records, which keep which files have readers; null outside CSI mode
     */
    Diagnostics(AgentConfig config, String node, TaskScheduler timers, InstantSource clock, MeterRegistry metrics,
            PodEvents events, VolumeStore store) {
        this.config = config;
        this.node = node;
        this.clock = clock;
        this.events = events;
        this.store = store;
        AgentConfig.RereadCheck reread = config.rereadCheck();
        this.reads = reread.enabled()
                ? ConsumerReads.on(reread.thresholdPercent(), timers, clock, this::notReread, this::firstRead,
                        new ReadTracker.Escalation(reread::expiringMargin, this::expiringUnread))
                : ConsumerReads.off();
        if (reads.tracker() != null) {
            ReadMetrics.register(metrics, reads.tracker());
        }
    }

    ConsumerReads reads() {
        return reads;
    }

    /** Starts watching reads; before any token is written. */
    void start() {
        reads.start();
    }

    /** The CSI volumes resumed at start: the readers they recorded before this start are known again. */
    void resumed(List<PublishedVolume> resumed) {
        ReadTracker tracker = reads.tracker();
        if (tracker != null) {
            resumed.forEach(volume -> tracker.consumers(volume.targetPath(), volume.readFiles()));
        }
    }

    /** Serves the status endpoint if the config names its socket; when it cannot start, says why. */
    void serveStatus(RefreshScheduler scheduler, ReloadNotifier reloads) {
        Optional<Path> socket = config.statusSocket();
        if (socket.isEmpty()) {
            return;
        }
        StatusEndpoint endpoint = new StatusEndpoint(socket.get(), node, scheduler,
                reads.watching() ? reads.tracker() : null, config.rereadCheck().thresholdPercent(), clock, reloads);
        try {
            endpoint.start();
            status = endpoint;
            log.info("serving the status endpoint (explain) on {}", socket.get());
        } catch (IOException e) {
            log.warn("not serving the status endpoint: {}", e.getMessage());
        }
    }

    /** A reader that did not open its rotated token: one log line, and an Event when it is a pod's. */
    private void notReread(ReadTracker.Finding finding) {
        log.warn("{} was not opened since its token rotated at {}; its reader still holds a token that expires at {}",
                finding.dir().dir().resolve(finding.projection().path()), finding.rotatedAt(), finding.heldExpiresAt());
        if (events != null) {
            events.notReread(finding);
        }
    }

    /** A reader still holding its old token close to that token's expiry: a log line, and an Event for a pod. */
    private void expiringUnread(ReadTracker.Finding finding) {
        log.warn("{} is still not opened since its token rotated at {}; its reader's token expires at {}",
                finding.dir().dir().resolve(finding.projection().path()), finding.rotatedAt(), finding.heldExpiresAt());
        if (events != null) {
            events.expiringUnread(finding);
        }
    }

    /** A pod's file was first seen read: its volume's record says so, for the next start. */
    private void firstRead(TokenDirectory dir, String path) {
        if (store == null || dir.owner() == null) {
            return;
        }
        try {
            store.markRead(dir.owner().volumeId(), path);
        } catch (IOException | RuntimeException e) {
            log.warn("cannot record that {} of {} has a reader: {}", path, dir.name(), Failures.inWords(e));
        }
    }

    @Override
    public void close() {
        if (status != null) {
            status.close();
        }
        reads.close();
    }
}
