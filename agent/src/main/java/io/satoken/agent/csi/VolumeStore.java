package io.satoken.agent.csi;

import com.google.gson.Gson;
import io.satoken.agent.projection.PodIdentity;
import io.satoken.agent.projection.Projection;
import io.satoken.agent.reload.ReloadRequest;
import io.satoken.agent.reload.ReloadSignal;
import io.satoken.agent.token.BoundObjectRef;
import io.satoken.agent.token.TokenKey;
import io.satoken.common.kube.Failures;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.AtomicMoveNotSupportedException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.regex.Pattern;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One small JSON file per published volume, {@code <dir>/<volumeId>.json} (0600 in a 0700 directory), so
 * a restarted agent can resume refreshing the volumes the kubelet will not publish again. A file holds a
 * {@link PublishedVolume}: the target path, the pod, the files' keys, modes and owners, and which files have been
 * seen read (so a restart still knows a file has a reader, see {@link #markRead}); never a token.
 * Files are replaced atomically (write a temporary file, rename it over the old one).
 */
public final class VolumeStore {

    private static final Logger log = LoggerFactory.getLogger(VolumeStore.class);
    private static final String SUFFIX = ".json";
    /** Kubelet's inline volume ids are {@code csi-<sha256>}; anything else that fits a file name is fine too. */
    private static final Pattern VOLUME_ID = Pattern.compile("[A-Za-z0-9][A-Za-z0-9._-]{0,127}");
    private static final Gson GSON = new Gson();

    private final Path dir;

    public VolumeStore(Path dir) {
        this.dir = dir;
    }

    /** Whether the id can name a file here; the CSI server refuses others as invalid. */
    public static boolean validId(String volumeId) {
        return VOLUME_ID.matcher(volumeId).matches();
    }

    /** Creates the directory (0700) if it is missing. */
    public void create() throws IOException {
        Files.createDirectories(dir);
        Files.setPosixFilePermissions(dir, PosixFilePermissions.fromString("rwx------"));
    }

    public synchronized void save(PublishedVolume volume) throws IOException {
        Path file = file(volume.volumeId());
        Path temp = dir.resolve("." + volume.volumeId() + ".tmp");
        Files.deleteIfExists(temp);
        Files.createFile(temp, PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rw-------")));
        Files.writeString(temp, GSON.toJson(Stored.of(volume)), StandardCharsets.UTF_8);
        try {
            Files.move(temp, file, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
        } catch (AtomicMoveNotSupportedException e) {
            Files.move(temp, file, StandardCopyOption.REPLACE_EXISTING);
        }
    }

    public synchronized void delete(String volumeId) throws IOException {
        Files.deleteIfExists(file(volumeId));
    }

    /**
     * Records that the pod of a stored volume read one of its files; nothing when the volume has no record (it was
     * unpublished meanwhile) or the file is already recorded.
     */
    public synchronized void markRead(String volumeId, String path) throws IOException {
        Path file = file(volumeId);
        if (!Files.exists(file)) {
            return;
        }
        PublishedVolume volume = GSON.fromJson(Files.readString(file, StandardCharsets.UTF_8), Stored.class).toVolume();
        if (!volume.readFiles().contains(path)) {
            Set<String> read = new HashSet<>(volume.readFiles());
            read.add(path);
            save(new PublishedVolume(volume.volumeId(), volume.targetPath(), volume.pod(), volume.files(), read,
                    volume.reload()));
        }
    }

    /** Every stored volume; a file that cannot be read is logged and left alone. */
    public List<PublishedVolume> loadAll() throws IOException {
        List<PublishedVolume> volumes = new ArrayList<>();
        if (!Files.isDirectory(dir)) {
            return volumes;
        }
        try (DirectoryStream<Path> files = Files.newDirectoryStream(dir, "*" + SUFFIX)) {
            for (Path file : files) {
                try {
                    Stored stored = GSON.fromJson(Files.readString(file, StandardCharsets.UTF_8), Stored.class);
                    volumes.add(stored.toVolume());
                } catch (IOException | RuntimeException e) { // JsonParseException, a missing field
                    log.warn("ignoring unreadable volume record {}: {}", file, Failures.inWords(e));
                }
            }
        }
        return volumes;
    }

    private Path file(String volumeId) {
        if (!validId(volumeId)) {
            throw new IllegalArgumentException("volume_id: must match " + VOLUME_ID + ", got a different id");
        }
        return dir.resolve(volumeId + SUFFIX);
    }

    /** The file's JSON shape: plain strings and numbers, so it reads back whatever the JDK's Path is. */
    private record Stored(String volumeId, String targetPath, String namespace, String podName, String podUid,
            String serviceAccount, List<StoredFile> files, List<String> readFiles, String reloadSignal,
            String reloadContainer) {

        static Stored of(PublishedVolume v) {
            List<StoredFile> files = v.files().stream().map(p -> new StoredFile(p.path(), p.key().audiences(),
                    p.key().expirationSeconds(), p.mode(), p.uid(), p.gid())).toList();
            PodIdentity pod = v.pod();
            return new Stored(v.volumeId(), v.targetPath().toString(), pod.namespace(), pod.name(), pod.uid(),
                    pod.serviceAccount(), files, v.readFiles().stream().sorted().toList(),
                    v.reload() == null ? null : v.reload().signal().name(),
                    v.reload() == null ? null : v.reload().container());
        }

        PublishedVolume toVolume() {
            PodIdentity pod = new PodIdentity(namespace, podName, podUid, serviceAccount);
            BoundObjectRef boundTo = BoundObjectRef.pod(podName, podUid);
            List<Projection> projections = files.stream().map(f -> new Projection(
                    new TokenKey(namespace, serviceAccount, f.audiences(), f.expirationSeconds(), boundTo),
                    f.path(), f.mode(), f.uid(), f.gid())).toList();
            // a record written before readFiles existed has none
            // nor one written before reloadSignal existed any reload request
            ReloadRequest reload = reloadSignal == null || reloadContainer == null ? null
                    : ReloadSignal.of(reloadSignal).map(s -> new ReloadRequest(s, reloadContainer)).orElse(null);
            return new PublishedVolume(volumeId, Path.of(targetPath), pod, projections,
                    readFiles == null ? Set.of() : Set.copyOf(readFiles), reload);
        }
    }

    private record StoredFile(String path, List<String> audiences, long expirationSeconds, int mode, Integer uid,
            Integer gid) {}
}
