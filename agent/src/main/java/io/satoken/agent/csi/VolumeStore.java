package io.satoken.agent.csi;

import com.google.gson.Gson;
import io.satoken.agent.projection.PodOwners;
import io.satoken.common.kube.Failures;
import io.satoken.common.projection.InvalidProjectionException;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.AtomicMoveNotSupportedException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.regex.Pattern;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One small JSON file per published volume, {@code <dir>/<volumeId>.json} (0600 in a 0700 directory), so
 * a restarted agent can resume refreshing the volumes the kubelet will not publish again. A file holds what a
 * {@link PublishedVolume} is read from: the target path, the volume's attributes as the kubelet sent them (its
 * tokens left out), the owners and reload container the publish resolved from the pod, and which files have been
 * seen read (so a restart still knows a file has a reader, see {@link #markRead}); never a token. The files are read
 * from the attributes again at load, as a publish reads them. Files are replaced atomically (write a temporary
 * file, rename it over the old one).
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
        PublishedVolume volume;
        try {
            volume = GSON.fromJson(Files.readString(file, StandardCharsets.UTF_8), Stored.class).toVolume(file);
        } catch (InvalidProjectionException | RuntimeException e) {
            return; // loadAll says why at the next start
        }
        if (!volume.readFiles().contains(path)) {
            save(volume.withRead(path));
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
                    volumes.add(stored.toVolume(file));
                } catch (IOException | InvalidProjectionException | RuntimeException e) { // JsonParseException
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

    /**
     * The file's JSON shape: plain strings, numbers and the attributes' map, so it reads back whatever the JDK's Path
     * is. Adding an attribute to the volume context changes nothing here.
     */
    private record Stored(String volumeId, String targetPath, Map<String, String> attributes, PodOwners owners,
            String reloadContainer, List<String> readFiles) {

        static Stored of(PublishedVolume v) {
            return new Stored(v.volumeId(), v.targetPath().toString(), new TreeMap<>(v.attributes()), v.owners(),
                    v.reloadContainer(), v.readFiles().stream().sorted().toList());
        }

        PublishedVolume toVolume(Path file) throws InvalidProjectionException {
            if (attributes == null) {
                // written by a snapshot before the attributes were kept: it names the files field by field
                throw new IllegalArgumentException(file + " is of an earlier snapshot's format, without the volume's "
                        + "attributes; its pod gets its volume again when it is recreated");
            }
            return PublishedVolume.of(volumeId, Path.of(targetPath), attributes,
                    owners == null ? new PodOwners(null, null) : owners, reloadContainer,
                    readFiles == null ? Set.of() : Set.copyOf(readFiles));
        }
    }
}
