package io.satoken.agent.pods;

import io.kubernetes.client.openapi.models.V1Pod;
import io.satoken.agent.metrics.AgentMetrics;
import io.satoken.agent.projection.PodProjections;
import io.satoken.agent.projection.Projection;
import io.satoken.agent.projection.TokenDirectory;
import io.satoken.agent.refresh.RefreshListener;
import io.satoken.agent.refresh.RefreshScheduler;
import io.satoken.agent.token.TokenAdoption;
import io.satoken.agent.token.TokenCache;
import io.satoken.agent.token.TokenInfo;
import io.satoken.agent.token.TokenKey;
import io.satoken.agent.token.TokenSourceException;
import io.satoken.agent.write.Directories;
import io.satoken.common.projection.InvalidProjectionException;
import io.satoken.common.projection.ProjectionAnnotation;
import io.satoken.common.projection.ProjectionSpec;
import java.io.IOException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Turns the pods bound to this node into token directories under {@code <rootDir>/pods/<podUID>/}.
 *
 * <p>For each pod event:
 * <ol>
 *   <li>A pod that is gone, or whose phase is Succeeded or Failed, loses its tokens (TM-10) and its
 *       directory. So does a pod whose annotation was removed.</li>
 *   <li>An annotation equal to the one already applied changes nothing (status updates are frequent).</li>
 *   <li>An invalid annotation is reported as a Warning Event and a metric; a directory that was already
 *       running for the pod keeps running with its last valid projections.</li>
 *   <li>A new directory first adopts the still-valid tokens on disk ({@link TokenAdoption}), then is
 *       registered with the scheduler, which requests only what is missing or due.</li>
 * </ol>
 * After the informer's first full list, {@link #synced} removes the directories of pods that no longer
 * exist. Failures to fetch a pod's token become {@code TokenRequestFailed} Events on that pod, and a
 * token issued in the node's future a {@code TokenClockSkew} Event ({@link #clockSkew}).
 *
 * <p>Called from the informer's single event thread and from the scheduler's threads; state is guarded
 * by {@code this}, and no lock is held while calling the scheduler or the event sink.
 */
public final class PodTokens implements RefreshListener {

    private static final Logger log = LoggerFactory.getLogger(PodTokens.class);
    private static final String DIR_PREFIX = "pod:";

    private final Path podsDir;
    private final Path rootDir;
    private final RefreshScheduler scheduler;
    private final TokenCache cache;
    private final TokenAdoption adoption;
    private final PodEventSink events;
    private final AgentMetrics metrics;

    private final Map<String, Applied> pods = new HashMap<>();

    /** What is running for one pod: the annotation value it came from and the pod it names. */
    private record Applied(String annotation, V1Pod pod, TokenDirectory dir) {}

    public PodTokens(Path rootDir, RefreshScheduler scheduler, TokenCache cache, TokenAdoption adoption,
            PodEventSink events, AgentMetrics metrics) {
        this.rootDir = Objects.requireNonNull(rootDir, "rootDir");
        this.podsDir = rootDir.resolve("pods");
        this.scheduler = scheduler;
        this.cache = cache;
        this.adoption = adoption;
        this.events = events;
        this.metrics = metrics;
    }

    /** A pod was added or updated. */
    public void apply(V1Pod pod) {
        String uid;
        try {
            uid = PodProjections.podUid(pod);
        } catch (IllegalArgumentException e) {
            log.warn("ignoring a pod without a usable uid: {}", e.getMessage());
            return;
        }
        String annotation = annotation(pod);
        if (annotation == null || isFinished(pod)) {
            remove(uid); // 1
            return;
        }
        Applied current;
        synchronized (this) {
            current = pods.get(uid);
        }
        if (current != null && current.annotation().equals(annotation)) {
            return; // 2
        }
        TokenDirectory dir;
        try {
            List<ProjectionSpec> specs = ProjectionAnnotation.parse(annotation);
            dir = PodProjections.directory(pod, specs, rootDir);
        } catch (InvalidProjectionException | IllegalArgumentException e) {
            rejected(pod, current, e.getMessage()); // 3
            return;
        }
        try {
            Directories.create(dir.dir());
        } catch (IOException e) {
            log.error("cannot create {} for pod {}: {}", dir.dir(), describe(pod), e.toString());
            metrics.writeFailed(dir, e);
            return;
        }
        synchronized (this) {
            pods.put(uid, new Applied(annotation, pod, dir));
        }
        if (current == null) {
            int adopted = adoption.adopt(dir); // 4
            if (adopted > 0) {
                log.info("pod {}: adopted {} token(s) already on disk", describe(pod), adopted);
            }
        }
        scheduler.put(dir);
    }

    /** A pod was deleted from the API. */
    public void delete(V1Pod pod) {
        String uid = pod.getMetadata() == null ? null : pod.getMetadata().getUid();
        if (uid != null) {
            remove(uid);
        }
    }

    /**
     * The informer has listed every pod on the node once: directories under {@code <rootDir>/pods} that
     * belong to none of them are removed.
     *
     * @return the names of the directories removed
     */
    public List<String> synced(Set<String> livePodUids) throws IOException {
        if (!Files.isDirectory(podsDir, LinkOption.NOFOLLOW_LINKS)) {
            return List.of();
        }
        List<String> removed = new java.util.ArrayList<>();
        try (DirectoryStream<Path> entries = Files.newDirectoryStream(podsDir)) {
            for (Path entry : entries) {
                String name = entry.getFileName().toString();
                boolean known;
                synchronized (this) {
                    known = pods.containsKey(name);
                }
                if (!known && !livePodUids.contains(name)) {
                    Directories.delete(entry);
                    removed.add(name);
                }
            }
        }
        if (!removed.isEmpty()) {
            log.info("removed {} directories of pods that no longer exist", removed.size());
        }
        return removed;
    }

    /** How many pods have token directories. */
    public synchronized int size() {
        return pods.size();
    }

    /** A token written to {@code dir} was issued in this node's future: a Warning Event, if it is a pod's. */
    public void clockSkew(TokenDirectory dir, Projection projection, TokenInfo info) {
        V1Pod pod = podOf(dir);
        if (pod != null) {
            events.warning(pod, PodEventSink.TOKEN_CLOCK_SKEW, "token for " + projection.path()
                    + " was issued at " + info.issuedAt() + (info.notBefore() == null ? "" : " (nbf " + info.notBefore() + ")")
                    + ", ahead of this node's clock; check time synchronisation on node and API server");
        }
    }

    @Override
    public void fetchFailed(TokenKey key, List<TokenDirectory> dirs, TokenSourceException error, boolean serving) {
        for (TokenDirectory dir : dirs) {
            V1Pod pod = podOf(dir);
            if (pod != null) {
                String paths = dir.projections().stream().filter(p -> p.key().equals(key)).map(Projection::path)
                        .toList().toString();
                events.warning(pod, PodEventSink.TOKEN_REQUEST_FAILED, "token for " + paths + ": "
                        + error.getMessage() + (serving ? " (the current token stays in place until it expires)" : ""));
            }
        }
    }

    private void rejected(V1Pod pod, Applied current, String why) {
        metrics.invalidProjection("pod");
        String kept = current == null ? "" : "; the previous projections keep running";
        log.warn("pod {}: {}{}", describe(pod), why, kept);
        events.warning(pod, PodEventSink.INVALID_TOKEN_PROJECTION, why + kept);
    }

    private void remove(String uid) {
        Applied gone;
        synchronized (this) {
            gone = pods.remove(uid);
        }
        Path dir = podsDir.resolve(uid);
        if (gone != null) {
            scheduler.remove(gone.dir().name());
            cache.invalidatePod(uid); // TM-10
        } else if (!Files.exists(dir, LinkOption.NOFOLLOW_LINKS)) {
            return; // the common case for pods without tokens: nothing cached, nothing on disk
        }
        try {
            Directories.delete(dir);
        } catch (IOException e) {
            log.warn("cannot remove {}: {}", dir, e.toString());
        }
    }

    private synchronized V1Pod podOf(TokenDirectory dir) {
        if (!dir.name().startsWith(DIR_PREFIX)) {
            return null;
        }
        Applied applied = pods.get(dir.name().substring(DIR_PREFIX.length()));
        return applied == null ? null : applied.pod();
    }

    private static String annotation(V1Pod pod) {
        Map<String, String> annotations = pod.getMetadata() == null ? null : pod.getMetadata().getAnnotations();
        return annotations == null ? null : annotations.get(ProjectionAnnotation.NAME);
    }

    private static boolean isFinished(V1Pod pod) {
        String phase = pod.getStatus() == null ? null : pod.getStatus().getPhase();
        return "Succeeded".equals(phase) || "Failed".equals(phase);
    }

    static String describe(V1Pod pod) {
        return pod.getMetadata().getNamespace() + "/" + pod.getMetadata().getName();
    }
}
