package io.satoken.agent.status;

import io.satoken.agent.projection.PodIdentity;
import io.satoken.agent.reads.ReadTracker;
import io.satoken.agent.refresh.FileStatus;
import io.satoken.agent.reload.ReloadNotifier;
import io.satoken.agent.refresh.RefreshScheduler;
import io.satoken.common.health.UnixSocketServer;
import io.satoken.common.health.UnixSocketServer.Answer;
import java.io.IOException;
import java.nio.file.Path;
import java.time.InstantSource;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.function.Predicate;

/**
 * The agent's local status endpoint: HTTP on a Unix socket only (mode 0600, so only the agent's user and root can
 * ask), answering {@code GET /v1/directories} with every directory the agent keeps and {@code GET
 * /v1/pods/NAMESPACE/NAME} with one pod's, in {@link StatusReport}'s JSON. It shows no token. {@code
 * satoken-agent explain} is its client.
 */
public final class StatusEndpoint implements AutoCloseable {

    /** The paths it answers. */
    public static final String DIRECTORIES = "/v1/directories";
    public static final String PODS = "/v1/pods/";

    private final String node;
    private final RefreshScheduler scheduler;
    private final ReadTracker tracker;
    private final int thresholdPercent;
    private final InstantSource clock;
    private final UnixSocketServer server;
    private final ReloadNotifier reloads;

    /**
     * @param tracker the read tracker, or null when reads are not watched
     * @param thresholdPercent the config's rereadThresholdPercent, which the report shows
     */
    public StatusEndpoint(Path socket, String node, RefreshScheduler scheduler, ReadTracker tracker,
            int thresholdPercent, InstantSource clock) {
        this(socket, node, scheduler, tracker, thresholdPercent, clock, null);
    }

    /** @param reloads the volumes' reload signals, or null when none are sent */
    public StatusEndpoint(Path socket, String node, RefreshScheduler scheduler, ReadTracker tracker,
            int thresholdPercent, InstantSource clock, ReloadNotifier reloads) {
        this.reloads = reloads;
        this.node = node;
        this.scheduler = scheduler;
        this.tracker = tracker;
        this.thresholdPercent = thresholdPercent;
        this.clock = clock;
        this.server = new UnixSocketServer(socket, this::answer, "satoken-status");
    }

    public void start() throws IOException {
        server.start();
    }

    public Path socket() {
        return server.socket();
    }

    Answer answer(String path) {
        if (path.equals(DIRECTORIES)) {
            return Answer.json(report(entries(dir -> true)));
        }
        if (path.startsWith(PODS)) {
            String[] parts = path.substring(PODS.length()).split("/", -1);
            if (parts.length != 2 || parts[0].isEmpty() || parts[1].isEmpty()) {
                return Answer.text(404, "want " + PODS + "NAMESPACE/NAME, got " + path + "\n");
            }
            List<StatusReport.Entry> pods = entries(pod -> pod.isPresent()
                    && pod.get().namespace().equals(parts[0]) && pod.get().name().equals(parts[1]));
            if (pods.isEmpty()) {
                return Answer.text(404, "pod " + parts[0] + "/" + parts[1] + " has no satoken volume "
                        + (node == null ? "on this agent's node" : "on node " + node)
                        + " (explain asks the agent of the pod's own node; kubectl satoken explain finds it)\n");
            }
            return Answer.json(report(pods));
        }
        return Answer.text(404, "no such path: " + path + " (try " + DIRECTORIES + " or " + PODS
                + "NAMESPACE/NAME)\n");
    }

    private List<StatusReport.Entry> entries(Predicate<Optional<PodIdentity>> wanted) {
        List<StatusReport.Entry> entries = new ArrayList<>();
        for (FileStatus.Directory directory : scheduler.status()) {
            Optional<PodIdentity> pod = Optional.ofNullable(directory.dir().pod()); // a volume's directory carries its pod
            if (wanted.test(pod)) {
                String name = directory.dir().name();
                entries.add(new StatusReport.Entry(directory, pod,
                        reloads == null ? Optional.empty() : reloads.request(name),
                        reloads == null ? Optional.empty() : reloads.last(name)));
            }
        }
        return entries;
    }

    private String report(List<StatusReport.Entry> entries) {
        return StatusReport.json(node, clock.instant(), thresholdPercent, entries, tracker);
    }

    @Override
    public void close() {
        server.close();
    }
}
