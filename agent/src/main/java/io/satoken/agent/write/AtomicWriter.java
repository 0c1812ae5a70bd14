package io.satoken.agent.write;

import static java.nio.file.LinkOption.NOFOLLOW_LINKS;

import io.satoken.common.paths.PayloadPathException;
import java.io.IOException;
import java.nio.file.DirectoryNotEmptyException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.time.InstantSource;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.regex.Pattern;

/**
 * Writes a set of files into a target directory so that readers see either the whole old set or the
 * whole new set, never a mix: kubelet's AtomicWriter layout (AW-1..AW-5).
 *
 * <pre>
 * T/..2024_05_01_12_00_00.4821...   the files of one version (0711, or 0750/0751 group G; see DirectoryAccess)
 * T/..data -> ..2024_05_01_12_00_00.4821...   swapped with one rename(2)
 * T/token  -> ..data/token          one link per top-level name of the payload
 * </pre>
 *
 * <p>One writer per directory; {@link #write} and {@link #cleanUp} may be called from several threads
 * of that writer. Names starting with {@code ..} belong to the writer (AW-5); other names in the
 * target directory that the payload never held are not touched.
 */
public final class AtomicWriter implements DirectoryWriter {

    static final String DATA_DIR = "..data";
    static final String DATA_TMP = "..data_tmp";
    /** AW-1: {@code ..} + UTC time + {@code .} + the temp-dir call's random digits. */
    static final Pattern TIMESTAMPED_DIR = Pattern.compile("\\.\\.\\d{4}(_\\d{2}){5}\\.\\d+");
    private static final DateTimeFormatter TIMESTAMP =
            DateTimeFormatter.ofPattern("uuuu_MM_dd_HH_mm_ss").withZone(ZoneOffset.UTC);

    private final Path targetDir;
    private final InstantSource clock;
    private final boolean unixView;
    private final DataLinks links;
    private final VersionObserver observer;

    /** The dir this writer last published and the paths it put there, children before parents. */
    private String publishedName;
    private List<String> publishedPaths;
    /**
     * Whether the next successful write must look for stray timestamped dirs. True for a new writer,
     * since crash leftovers come from an earlier process, and again after any failed write; a writer
     * that removes its own failures (steps 6, 8, 9) need not list the target dir on every write.
     */
    private boolean sweepPending = true;

    /** No I/O here: a missing target dir is reported by the first {@link #write} (AW-16). */
    public AtomicWriter(Path targetDir, InstantSource clock) {
        this(targetDir, clock, VersionObserver.NONE);
    }

    /** @param observer told which version is current, and when the writer reads one itself */
    public AtomicWriter(Path targetDir, InstantSource clock, VersionObserver observer) {
        this.observer = Objects.requireNonNull(observer, "observer");
        this.targetDir = Objects.requireNonNull(targetDir, "targetDir");
        this.clock = Objects.requireNonNull(clock, "clock");
        this.unixView = targetDir.getFileSystem().supportedFileAttributeViews().contains("unix");
        this.links = new DataLinks(targetDir);
    }

    /**
     * Publishes the payload as the new version of the target dir.
     *
     * <pre>
     *  1. Validate and clean every key (AW-7, AW-15); an invalid key fails before any I/O.
     *  2. Read ..data to find the old timestamped dir; none means first write (AW-8).
     *  3. pathsToRemove = old paths minus payload paths and their ancestors (AW-9). The old dir is
     *     walked once, or not at all when this writer published it and so knows its paths.
     *  4. Decide whether to write (AW-10). Differs from upstream: mode, uid and gid count as well as
     *     content, and a file/dir mismatch counts as a change (AW-14); so does a target dir (when the
     *     writer's user owns it) or old timestamped dir without the payload's DirectoryAccess. Unchanged
     *     and nothing to remove: only step 10 runs, and write returns false (the #121472 fix).
     *  5. Create the new timestamped dir (AW-11) with the payload's DirectoryAccess (0700 .. 0751, the
     *     files' group when they share one), where upstream makes it 0755 (AW-1).
     *  6. Write each file, then chmod it to its exact mode and chown it if asked (AW-6); subdirectories
     *     get the DirectoryAccess too. Differs from upstream: on failure the new dir is removed.
     *  7. Upstream's setPerms hook gives the whole volume fsGroup; here the files have their owners from
     *     step 6, and the target dir gets the DirectoryAccess, when the writer's user owns it (a tmpfs of
     *     the agent's, a static projection's dir it made), so the readers can reach the new version.
     *  8. Create ..data_tmp -> new dir. Differs from upstream: a stale ..data_tmp left by a crash is
     *     removed first. On failure the new dir is removed.
     *  9. rename(2) ..data_tmp over ..data: the atomic publish (AW-12). On failure ..data_tmp and the
     *     new dir are removed.
     * 10. Create each missing top-level link name -> ..data/name; an existing name is left alone (AW-4).
     * 11. Remove the links of top-level names no longer in the payload (AW-13), carrying on after an error.
     * 12. Remove the old dir. Differs from upstream: on a writer's first write and after a failed one,
     *     every other timestamped dir (a crash leftover) goes too; an unchanged first write removes
     *     them, and a stale ..data_tmp, as well.
     * </pre>
     *
     * @param payload relative path to content; keys are validated (AW-15) and cleaned
     * @return true when a new version was published, false when the payload was already on disk
     * @throws PayloadPathException for an invalid key, before touching the disk
     * @throws IOException when the target dir does not exist (AW-16) or a step fails; after an error in
     *     step 11 or 12 the new version is already published
     */
    @Override
    public synchronized boolean write(Map<String, FileContent> payload) throws IOException {
        // 1. AW-7
        CleanPayload files = CleanPayload.of(payload);
        DirectoryAccess access = DirectoryAccess.of(files.files().values());

        // 2. AW-8
        String oldDirName = publishedDirName();

        // 3. and 4. AW-9, AW-10
        if (oldDirName != null) {
            observer.comparing(targetDir, targetDir.resolve(oldDirName));
        }
        VersionDiff diff = oldDirName == null ? null
                : VersionDiff.compute(targetDir.resolve(oldDirName),
                        oldDirName.equals(publishedName) ? publishedPaths : null, files, unixView);
        if (diff != null && !diff.changed() && !diff.hasPathsToRemove()
                && accessHeld(access, targetDir.resolve(oldDirName))) {
            observer.current(targetDir, targetDir.resolve(oldDirName), files.files().keySet());
            links.createMissing(files); // 10. only
            if (!oldDirName.equals(publishedName)) {
                // the old dir holds exactly this payload: the next write need not list it again
                publishedName = oldDirName;
                publishedPaths = files.pathsDeepestFirst();
            }
            if (sweepPending) {
                removeLeftovers(oldDirName);
            }
            return false;
        }

        // 5. AW-11
        Path newDir = Files.createTempDirectory(targetDir, ".." + TIMESTAMP.format(clock.instant()) + ".",
                VersionFiles.DIR_ATTRIBUTE);
        String newDirName = newDir.getFileName().toString();
        try {
            access.applyTo(newDir);
            // 6. AW-6
            VersionFiles.write(newDir, files, access, unixView);
            // 7.
            if (ownedByWriter(newDir)) {
                access.applyTo(targetDir);
            }
            observer.current(targetDir, newDir, files.files().keySet());
            links.switchData(newDirName); // 8. and 9. AW-12
        } catch (IOException | RuntimeException e) {
            sweepPending = true;
            deleteQuietly(newDir, e);
            if (oldDirName != null) { // still the current version
                observer.current(targetDir, targetDir.resolve(oldDirName), publishedPaths(oldDirName, files));
            }
            throw e;
        }
        publishedName = newDirName;
        publishedPaths = files.pathsDeepestFirst();

        // 10. AW-4
        links.createMissing(files);

        // 11. AW-13
        IOException failure = null;
        if (diff != null) {
            for (String name : diff.topLevelToRemove()) {
                try {
                    links.deleteOwn(name);
                } catch (IOException e) {
                    failure = e;
                }
            }
        }

        // 12.
        try {
            if (oldDirName != null) {
                OldVersions.deleteOldDir(targetDir.resolve(oldDirName), diff.entries());
            }
            if (sweepPending && failure == null) {
                OldVersions.deleteStrayDirs(targetDir, newDirName);
                sweepPending = false;
            }
        } catch (IOException e) {
            if (failure != null) {
                e.addSuppressed(failure);
            }
            failure = e;
        }
        if (failure != null) {
            sweepPending = true;
            throw new IOException(targetDir + ": published " + newDirName
                    + ", but removing the old version failed: " + failure.getMessage(), failure);
        }
        return true;
    }

    /**
     * Removes crash leftovers without writing: a stale {@code ..data_tmp} and every timestamped dir
     * that {@code ..data} does not point to. Nothing else is touched.
     */
    public synchronized void cleanUp() throws IOException {
        removeLeftovers(publishedDirName());
    }

    /**
     * Removes everything this writer's layout put in the target dir: our links to {@code ..data}, the
     * {@code ..data} link, a stale {@code ..data_tmp} and every timestamped dir; then the target dir
     * itself if that left it empty. Anything else in the dir stays. Used when a projection goes away.
     */
    public synchronized void remove() throws IOException {
        if (!Files.isDirectory(targetDir, NOFOLLOW_LINKS)) {
            return;
        }
        try (DirectoryStream<Path> entries = Files.newDirectoryStream(targetDir)) {
            for (Path entry : entries) {
                String name = entry.getFileName().toString();
                if (!name.startsWith("..")) {
                    links.deleteOwn(name);
                }
            }
        }
        Files.deleteIfExists(targetDir.resolve(DATA_DIR));
        removeLeftovers(null);
        publishedName = null;
        publishedPaths = null;
        sweepPending = true;
        try {
            Files.deleteIfExists(targetDir);
        } catch (DirectoryNotEmptyException e) {
            // someone else's files live here too; they stay
        }
    }

    private void removeLeftovers(String keep) throws IOException {
        Files.deleteIfExists(targetDir.resolve(DATA_TMP));
        OldVersions.deleteStrayDirs(targetDir, keep);
        sweepPending = false;
    }

    /** The base name {@code ..data} points to; null when there is none yet. AW-16 is checked here. */
    private String publishedDirName() throws IOException {
        Path target;
        try {
            target = Files.readSymbolicLink(targetDir.resolve(DATA_DIR));
        } catch (NoSuchFileException e) {
            if (!Files.isDirectory(targetDir)) {
                throw new NoSuchFileException(targetDir.toString(), null, "target directory does not exist");
            }
            return null;
        }
        String name = target.toString();
        // Only a dir this writer made is walked and later deleted. A ..data pointing elsewhere is
        // replaced by the next swap, but its target is left alone.
        return TIMESTAMPED_DIR.matcher(name).matches() ? name : null;
    }

    /** The files of the version this writer published, else (not known without a walk) those of the payload. */
    private Collection<String> publishedPaths(String dirName, CleanPayload payload) {
        return dirName.equals(publishedName) ? publishedPaths : payload.files().keySet();
    }

    /** Whether the old dir, and the target dir when it is the writer's, already have the payload's access. */
    private boolean accessHeld(DirectoryAccess access, Path oldDir) throws IOException {
        return access.heldBy(oldDir) && (!ownedByWriter(oldDir) || access.heldBy(targetDir));
    }

    /**
     * Whether the target dir belongs to the user that made {@code ownDir}, the writer's: only then does the
     * writer set its access. A dir someone else made for the tokens keeps what they gave it.
     */
    private boolean ownedByWriter(Path ownDir) throws IOException {
        return Files.getOwner(targetDir).equals(Files.getOwner(ownDir, NOFOLLOW_LINKS));
    }

    private static void deleteQuietly(Path path, Exception cause) {
        try {
            Directories.delete(path);
        } catch (IOException | RuntimeException e) {
            cause.addSuppressed(e);
        }
    }
}
