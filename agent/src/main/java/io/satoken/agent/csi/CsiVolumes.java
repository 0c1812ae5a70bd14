package io.satoken.agent.csi;

import io.grpc.Status;
import io.kubernetes.client.openapi.models.V1Pod;
import io.satoken.agent.projection.PodIdentity;
import io.satoken.agent.projection.PodOwners;
import io.satoken.agent.projection.PodProjections;
import io.satoken.agent.projection.Projection;
import io.satoken.agent.projection.TokenDirectory;
import io.satoken.agent.refresh.RefreshScheduler;
import io.satoken.agent.refresh.TokenAdoption;
import io.satoken.agent.reload.ReloadNotifier;
import io.satoken.agent.reload.ReloadRequest;
import io.satoken.agent.token.DeliveredTokens;
import io.satoken.agent.token.TokenSourceException;
import io.satoken.agent.write.FileOwnerException;
import io.satoken.common.kube.Failures;
import io.satoken.common.projection.CsiVolumeAttributes;
import io.satoken.common.projection.InvalidProjectionException;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.time.InstantSource;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The volumes this node's kubelet has published to the agent, each a tmpfs at its target path holding
 * one pod's token files, kept fresh by the {@link RefreshScheduler}.
 *
 * <p>Publishing a volume:
 * <ol>
 *   <li>The volume id and target path are checked: the target must lie under {@code <kubeletDir>/pods/}, the
 *       only place the kubelet asks for, so a caller cannot have a tmpfs mounted anywhere else.</li>
 *   <li>The attributes are read ({@link VolumeAttributes}); the pod's identity is the kubelet's pod info, and
 *       the target must be the kubelet's path for an inline volume of that pod's uid ({@link VolumeTarget}). With
 *       {@code tokenSource: kubelet} the kubelet's tokens are read from the request, checked against the pod and
 *       the files, and handed to the token source ({@link KubeletTokens}, {@link DeliveredTokens}); they never
 *       reach the attributes, the record or a log line.</li>
 *   <li>A volume already published at the same target answers as its first publish did (the kubelet
 *       retries); the same id at another target is refused, and so is a volume that would give its pod more
 *       than {@link PodLimits#MAX_PENDING_FILES} files waiting for their first token.</li>
 *   <li>The pod is read from the API server, for its securityContext (PV-16..PV-18); its uid must be the
 *       one the kubelet gave, so a pod deleted and recreated under the same name is not mistaken for it; it
 *       must be on this node, run as the kubelet's ServiceAccount and have the volume ({@link CurrentPod}),
 *       and ask for no more than {@link PodLimits} allows.</li>
 *   <li>A tmpfs is mounted at the target (unless one of ours already is, after a crash), and the volume's
 *       record is saved ({@link VolumeStore}) before any token exists, so a restart can resume it.</li>
 *   <li>The files go to the scheduler, and the publish completes when every file has been written
 *       once. If the first TokenRequest fails, the publish fails with the API server's reason and
 *       everything above is undone, so the kubelet's retry starts clean; so it does when the first write
 *       cannot give a file the owner or group the pod's securityContext asks for.</li>
 * </ol>
 * Unpublishing stops the refresh, unmounts, removes the target directory and the record; it succeeds
 * when there is nothing to do, and refuses a target that is not the volume's (or is another volume's). {@link #resume} re-registers, at start, every recorded volume whose tmpfs
 * is still mounted, adopting its still-valid tokens so none is requested again. Its Warning Events are not its own:
 * each volume's directory carries its pod ({@link PublishedVolume#directory}), for whoever reports on it.
 */
public final class CsiVolumes {

    private static final Logger log = LoggerFactory.getLogger(CsiVolumes.class);

    private final Path podsDir;
    private final String node;
    private final VolumeStore store;
    private final Mounter mounter;
    private final PodReader pods;
    private final RefreshScheduler scheduler;
    private final ReloadNotifier reloads;
    /** With {@code tokenSource: kubelet}, where the kubelet's tokens go; null when the agent requests them. */
    private final DeliveredTokens delivered;
    private final InstantSource clock;

    /** By volume id; guarded by {@code this}. */
    private final Map<String, Entry> volumes = new HashMap<>();

    /** A volume being published (volume null until it is registered) or published. */
    private static final class Entry {
        final Path target;
        /** The pod's uid and how many files the volume has, for the pod's in-flight cap; null when resumed. */
        final String podUid;
        final int files;
        final CompletableFuture<Void> firstWrite = new CompletableFuture<>();
        PublishedVolume volume;
        /** Where its files' owners come from, to name an id the node refuses; null for a resumed volume. */
        FileOwnerFields ownerFields;

        Entry(Path target, String podUid, int files) {
            this.target = target;
            this.podUid = podUid;
            this.files = files;
        }
    }

    /**
     * @param podsDir {@code <kubeletDir>/pods}; every target path must be under it
     * @param node this agent's node: a volume's pod must be bound to it
     * @param reloads sends the volumes' reload signals; null when the agent sends none
     */
    public CsiVolumes(Path podsDir, String node, VolumeStore store, Mounter mounter, PodReader pods,
            RefreshScheduler scheduler, ReloadNotifier reloads) {
        this(podsDir, node, store, mounter, pods, scheduler, reloads, null, InstantSource.system());
    }

    /**
     * @param delivered with {@code tokenSource: kubelet}, the scheduler's token source, which every publish hands the
     *     kubelet's tokens to ({@link KubeletTokens}); null when the agent requests its tokens itself
     * @param clock tells whether a delivered token has expired
     */
    public CsiVolumes(Path podsDir, String node, VolumeStore store, Mounter mounter, PodReader pods,
            RefreshScheduler scheduler, ReloadNotifier reloads, DeliveredTokens delivered, InstantSource clock) {
        this.reloads = reloads;
        this.delivered = delivered;
        this.clock = clock;
        this.podsDir = podsDir.toAbsolutePath().normalize();
        this.node = node;
        this.store = store;
        this.mounter = mounter;
        this.pods = pods;
        this.scheduler = scheduler;
    }

    /**
     * Publishes a volume; see the class comment for the steps.
     *
     * @return completes when every file is written, or fails with a {@link CsiException} (wrapped in a
     *     {@link java.util.concurrent.CompletionException}); each call gets its own future
     * @throws CsiException when the request itself is refused (bad id, path or attributes; pod not found)
     */
    public CompletableFuture<Void> publish(String volumeId, String targetPath, Map<String, String> attributes)
            throws CsiException {
        return publish(volumeId, targetPath, attributes, Map.of());
    }

    /**
     * As {@link #publish(String, String, Map)}, with the request's {@code secrets}: with {@code tokenSource: kubelet}
     * the kubelet's tokens are read from them, else from the volume context, checked against the pod and the files,
     * and handed to the token source before anything else happens. A republish (the kubelet's every minute or two)
     * whose token changed has it written at once; one with the same token writes nothing.
     */
    public CompletableFuture<Void> publish(String volumeId, String targetPath, Map<String, String> attributes,
            Map<String, String> secrets) throws CsiException {
        Path target = VolumeTarget.check(podsDir, volumeId, targetPath);                           // 1
        VolumeAttributes.Request request;
        try {
            request = VolumeAttributes.parse(KubeletTokens.withoutTokens(attributes));           // 2
        } catch (InvalidProjectionException e) {
            throw new CsiException(Status.Code.INVALID_ARGUMENT, e.getMessage());
        }
        PodIdentity pod = request.pod();
        Set<String> newTokens = delivered == null ? Set.of() : deliver(volumeId, pod, request, attributes, secrets);
        String volumeName = VolumeTarget.volumeName(podsDir, target, pod.uid());
        Entry entry;
        synchronized (this) {
            Entry existing = volumes.get(volumeId);                                              // 3
            if (existing != null) {
                if (!existing.target.equals(target)) {
                    throw new CsiException(Status.Code.ALREADY_EXISTS, "volume " + volumeId
                            + " is already published at " + existing.target + ", not at " + target);
                }
                if (!newTokens.isEmpty() && existing.volume != null) {
                    // the kubelet's refreshed token, written at once; only sets a timer (the scheduler never calls
                    // back into this class under its own lock, so this lock order is safe)
                    scheduler.refreshNow(existing.volume.files().stream().map(Projection::key)
                            .filter(k -> newTokens.contains(DeliveredTokens.audienceOf(k))).toList());
                }
                return existing.firstWrite.copy();
            }
            PodLimits.checkPending(pod, pendingFiles(pod.uid()), request.files().size());
            entry = new Entry(target, pod.uid(), request.files().size());
            volumes.put(volumeId, entry);
        }
        try {
            V1Pod current = CurrentPod.read(pods, pod, node, volumeName);                        // 4
            PodLimits.checkSpec(current, pod);
            List<Projection> files;
            PodOwners owners;
            ReloadRequest reload;
            try {
                owners = PodOwners.of(current);
                files = PodProjections.projections(pod, owners, request.files());
                reload = request.reload() == null ? null : request.reload().forPod(current);
            } catch (IllegalArgumentException e) {
                throw new CsiException(Status.Code.INVALID_ARGUMENT, "pod " + pod + ": " + e.getMessage());
            }
            if (reload != null && reloads == null) {
                throw new CsiException(Status.Code.INVALID_ARGUMENT, "pod " + pod + ": "
                        + CsiVolumeAttributes.field(CsiVolumeAttributes.RELOAD_SIGNAL) + ": this agent sends no"
                        + " signals (it runs without the host's process table)");
            }
            // what a restart reads the volume from again: the attributes as sent, and what the pod resolved
            PublishedVolume volume = new PublishedVolume(volumeId, target, KubeletTokens.withoutTokens(attributes),
                    owners, reload == null ? null : reload.container(), Set.of(), pod, files, reload);
            mount(target);                                                                       // 5
            store.save(volume);
            synchronized (this) {
                entry.volume = volume;
                entry.ownerFields = new FileOwnerFields(owners, request.files());
            }
            if (reload != null) {
                reloads.register(volume.directory().name(), pod, reload);
            }
            scheduler.put(volume.directory())                                                    // 6
                    .whenComplete((written, error) -> firstWrite(entry, error));
            log.info("published volume {} of pod {}: {} file(s)", volumeId, pod, files.size());
        } catch (CsiException | IOException | RuntimeException e) {
            CsiException failure = e instanceof CsiException c ? c
                    : new CsiException(Status.Code.INTERNAL, "publishing volume " + volumeId + " failed: " + Failures.inWords(e), e);
            abandon(volumeId, entry, failure);
            throw failure;
        }
        // A copy: a caller that gives up waiting (the CSI server's orTimeout completes the future it is
        // given) must not fail the volume itself, or every retry of the kubelet would get that failure.
        return entry.firstWrite.copy();
    }

    /**
     * Reads the kubelet's tokens of one publish, checks them against the pod and the volume's files, and keeps them
     * as the latest; never logs a token.
     *
     * @return the audiences whose token is not yet the one served ({@link DeliveredTokens#deliver})
     */
    private Set<String> deliver(String volumeId, PodIdentity pod, VolumeAttributes.Request request,
            Map<String, String> attributes, Map<String, String> secrets) throws CsiException {
        KubeletTokens.Delivery delivery = KubeletTokens.read(secrets, attributes, pod, clock.instant());
        KubeletTokens.checkFiles(request.files(), attributes.containsKey(CsiVolumeAttributes.PROJECTIONS), delivery);
        Set<String> changed = delivered.deliver(pod.uid(), delivery.tokens());
        if (!changed.isEmpty()) {
            // names the field, never a token; a republish with the same tokens logs nothing
            log.info("volume {} of pod {}: token(s) for audience(s) {} from the kubelet, in {}, not the one(s) this agent"
                    + " serves yet", volumeId, pod, new TreeSet<>(changed), delivery.via().field());
        }
        return changed;
    }

    /** Unpublishes a volume: stops its refresh, unmounts it, removes its directory and record. Idempotent. */
    public void unpublish(String volumeId, String targetPath) throws CsiException {
        Path target = VolumeTarget.check(podsDir, volumeId, targetPath);
        Entry entry;
        synchronized (this) {
            entry = volumes.get(volumeId);
            // the target must be the volume's own, and never another volume's: nothing else is unmounted
            Entry owner = volumes.values().stream().filter(e -> e.target.equals(target)).findFirst().orElse(null);
            if ((entry != null && !entry.target.equals(target)) || (owner != null && owner != entry)) {
                throw new CsiException(Status.Code.INVALID_ARGUMENT, "target_path: volume " + volumeId + " is "
                        + (entry == null ? "not published" : "published at " + entry.target) + ", and " + target
                        + (owner == null ? " is not its target" : " is another volume's") + "; nothing was unmounted");
            }
            volumes.remove(volumeId);
        }
        if (entry != null) {
            scheduler.remove(PublishedVolume.DIR_PREFIX + volumeId);
            forgetReload(volumeId);
            entry.firstWrite.completeExceptionally(new CsiException(Status.Code.ABORTED,
                    "volume " + volumeId + " was unpublished while it was being published"));
        }
        try {
            mounter.unmount(target);
            if (Files.isDirectory(target, LinkOption.NOFOLLOW_LINKS)) {
                Files.deleteIfExists(target); // empty once the tmpfs is gone; a non-empty one is not ours to remove
            }
            store.delete(volumeId);
        } catch (IOException e) {
            throw new CsiException(Status.Code.INTERNAL, "unpublishing volume " + volumeId + " at " + target
                    + " failed: " + e.getMessage(), e);
        }
        if (entry != null) {
            log.info("unpublished volume {}{}", volumeId, entry.volume == null ? "" : " of pod " + entry.volume.pod());
        }
    }

    /**
     * At start: resumes every recorded volume whose tmpfs is still mounted, adopting the tokens it holds;
     * forgets the others (the node restarted, or the volume was removed while the agent was down).
     *
     * @param adoption puts the still-valid tokens of a volume's files into the cache before it is registered
     * @return the volumes resumed, as recorded
     */
    public List<PublishedVolume> resume(TokenAdoption adoption) throws IOException {
        List<PublishedVolume> resumed = new ArrayList<>();
        for (PublishedVolume volume : store.loadAll()) {
            Path target = volume.targetPath();
            if (!target.normalize().startsWith(podsDir) || !mounter.isMounted(target)) {
                log.info("forgetting volume {} of pod {}: nothing of ours is mounted at {}",
                        volume.volumeId(), volume.pod(), target);
                store.delete(volume.volumeId());
                continue;
            }
            Entry entry = new Entry(target, null, 0);
            entry.volume = volume;
            entry.firstWrite.complete(null);
            synchronized (this) {
                volumes.put(volume.volumeId(), entry);
            }
            TokenDirectory dir = volume.directory();
            if (volume.reload() != null && reloads != null) {
                reloads.register(dir.name(), volume.pod(), volume.reload());
            }
            int adopted = adoption.adopt(dir);
            scheduler.resume(dir); // its first write is on disk already
            log.info("resumed volume {} of pod {}: adopted {} of {} token(s)", volume.volumeId(), volume.pod(),
                    adopted, dir.keys().size());
            resumed.add(volume);
        }
        return resumed;
    }

    /** How many volumes are published or being published. */
    public synchronized int size() {
        return volumes.size();
    }

    /**
     * The scheduler's answer to a volume's first write. Written: the publish completes. A first token that could not
     * be fetched fails the publish with the API server's reason. A write the node refuses because of one of the
     * volume's owner or group ids (a chown failing with EINVAL for an id outside the agent's user namespace, say)
     * fails it with FAILED_PRECONDITION naming the pod's field and the id. A failed publish is undone, so the
     * kubelet's retry starts clean and shows the reason in a FailedMount Event; every other volume is served as
     * before.
     */
    private void firstWrite(Entry entry, Throwable error) {
        if (error == null) {
            entry.firstWrite.complete(null);
            return;
        }
        Throwable cause = error instanceof CompletionException && error.getCause() != null ? error.getCause() : error;
        PublishedVolume volume;
        FileOwnerFields fields;
        synchronized (this) {
            volume = entry.volume;
            fields = entry.ownerFields;
        }
        if (volume == null || entry.firstWrite.isDone()) {
            return; // unpublished or abandoned meanwhile
        }
        CsiException failure;
        if (cause instanceof TokenSourceException e) {
            Status.Code code = e.permanent() ? Status.Code.FAILED_PRECONDITION : Status.Code.UNAVAILABLE;
            // the source's message already names the key and the API server's answer
            failure = new CsiException(code, "first token of the volume: " + e.getMessage());
        } else if (cause instanceof FileOwnerException refused && fields != null) {
            failure = new CsiException(Status.Code.FAILED_PRECONDITION, "pod " + volume.pod() + ": "
                    + fields.describe(refused), refused);
        } else {
            failure = new CsiException(Status.Code.INTERNAL, "first write of volume " + volume.volumeId()
                    + " failed: " + cause, cause);
        }
        abandon(volume.volumeId(), entry, failure);
    }

    /** Undoes a publish that failed: unregisters, unmounts, forgets; the failure goes to whoever waits. */
    private void abandon(String volumeId, Entry entry, CsiException failure) {
        synchronized (this) {
            if (volumes.get(volumeId) == entry) {
                volumes.remove(volumeId);
            }
        }
        scheduler.remove(PublishedVolume.DIR_PREFIX + volumeId);
        forgetReload(volumeId);
        try {
            mounter.unmount(entry.target);
            store.delete(volumeId);
        } catch (IOException | RuntimeException e) {
            log.warn("cleaning up volume {} after a failed publish: {}", volumeId, Failures.inWords(e));
        }
        log.warn("publishing volume {} failed: {}", volumeId, failure.getMessage());
        entry.firstWrite.completeExceptionally(failure);
    }

    private void forgetReload(String volumeId) {
        if (reloads != null) {
            reloads.remove(PublishedVolume.DIR_PREFIX + volumeId);
        }
    }

    /** Files of the pod's volumes still waiting for their first token. */
    private int pendingFiles(String podUid) {
        int pending = 0;
        for (Entry e : volumes.values()) {
            if (podUid.equals(e.podUid) && !e.firstWrite.isDone()) {
                pending += e.files;
            }
        }
        return pending;
    }

    private void mount(Path target) throws IOException {
        if (mounter.isMounted(target)) {
            return; // mounted by an earlier attempt that did not finish
        }
        Files.createDirectories(target);
        mounter.mountTmpfs(target);
    }
}
