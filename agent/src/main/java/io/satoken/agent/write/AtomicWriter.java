package io.satoken.agent.write;

import static java.nio.file.LinkOption.NOFOLLOW_LINKS;

import io.satoken.common.paths.PayloadPathException;
import java.io.IOException;
import java.nio.file.DirectoryNotEmptyException;
import java.nio.file.FileSystems;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.NotDirectoryException;
import java.nio.file.NotLinkException;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFileAttributes;
import java.nio.file.attribute.UserPrincipal;
import java.time.InstantSource;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.regex.Pattern;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

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
 * <p>One writer per directory; {@link #write} and {@link #remove} may be called from several threads
 * of that writer. Names starting with {@code ..} belong to the writer (AW-5); other names in the
 * target directory that the payload never held are not touched.
 */
public final class AtomicWriter implements DirectoryWriter {

    private static final Logger log = LoggerFactory.getLogger(AtomicWriter.class);

    static final String DATA_DIR = "..data";
    static final String DATA_TMP = "..data_tmp";
    /** AW-1: {@code ..} + UTC time + {@code .} + the temp-dir call's random digits. */
    static final Pattern TIMESTAMPED_DIR = Pattern.compile("\\.\\.\\d{4}(_\\d{2}){5}\\.\\d+");
    private static final DateTimeFormatter TIMESTAMP =
            DateTimeFormatter.ofPattern("uuuu_MM_dd_HH_mm_ss").withZone(ZoneOffset.UTC);

    private final Path targetDir;
    private final InstantSource clock;
    private final DataLinks links;
    private final VersionObserver observer;
    private UserPrincipal writerUser;

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
        try (OpenDir target = openTarget()) {
            return write(target, files, access);
        }
    }

    private boolean write(OpenDir target, CleanPayload files, DirectoryAccess access) throws IOException {
        // 2. AW-8
        String oldDirName = publishedDirName(target);

        // 3. and 4. AW-9, AW-10
        VersionDiff diff = null;
        if (oldDirName != null) {
            observer.comparing(targetDir, targetDir.resolve(oldDirName));
            try (OpenDir oldDir = target.openChild(oldDirName)) {
                diff = VersionDiff.compute(oldDir, oldDirName.equals(publishedName) ? publishedPaths : null, files);
            }
        }
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
                removeLeftovers(target, oldDirName);
            }
            return false;
        }

        // 5. AW-11
        Path newDir = Files.createTempDirectory(targetDir, ".." + TIMESTAMP.format(clock.instant()) + ".",
                VersionFiles.DIR_ATTRIBUTE);
        String newDirName = newDir.getFileName().toString();
        try {
            try (OpenDir version = target.openChild(newDirName)) {
                version.apply(access);
                // 6. AW-6
                VersionFiles.write(version, files, access);
            }
            // 7.
            if (ownedByWriter(newDir)) {
                access.applyTo(targetDir);
            }
            observer.current(targetDir, newDir, files.files().keySet());
            links.switchData(newDirName); // 8. and 9. AW-12
        } catch (IOException | RuntimeException e) {
            sweepPending = true;
            deleteQuietly(target, newDirName, e);
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
                target.deleteTree(oldDirName);
            }
            if (sweepPending && failure == null) {
                OldVersions.deleteStrayDirs(target, newDirName);
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
     * Removes everything this writer's layout put in the target dir: our links to {@code ..data}, the
     * {@code ..data} link, a stale {@code ..data_tmp} and every timestamped dir; then the target dir
     * itself if that left it empty. Anything else in the dir stays. Used when a projection goes away.
     */
    public synchronized void remove() throws IOException {
        if (!Files.isDirectory(targetDir, NOFOLLOW_LINKS)) {
            return;
        }
        try (OpenDir target = OpenDir.open(targetDir)) {
            for (String name : target.names()) {
                if (!name.startsWith("..")) {
                    links.deleteOwn(name);
                }
            }
            Files.deleteIfExists(targetDir.resolve(DATA_DIR));
            removeLeftovers(target, null);
        }
        publishedName = null;
        publishedPaths = null;
        sweepPending = true;
        try {
            Files.deleteIfExists(targetDir);
        } catch (DirectoryNotEmptyException e) {
            // someone else's files live here too; they stay
        }
    }

    private void removeLeftovers(OpenDir target, String keep) throws IOException {
        Files.deleteIfExists(targetDir.resolve(DATA_TMP));
        OldVersions.deleteStrayDirs(target, keep);
        sweepPending = false;
    }

    /** Opens the target dir; AW-16: a missing one fails the write. */
    private OpenDir openTarget() throws IOException {
        try {
            return OpenDir.open(targetDir);
        } catch (NoSuchFileException | NotDirectoryException e) {
            throw new NoSuchFileException(targetDir.toString(), null, "target directory does not exist");
        }
    }

    /**
     * The base name {@code ..data} points to, when it is a version this writer's user made: a directory (not a
     * link) of that name in the target dir, owned by the writer's user. Null when there is none yet, or when
     * {@code ..data} points anywhere else: the next swap replaces such a link, and its target is never walked,
     * read or deleted through it.
     */
    private String publishedDirName(OpenDir target) throws IOException {
        Path link;
        try {
            link = Files.readSymbolicLink(targetDir.resolve(DATA_DIR));
        } catch (NoSuchFileException | NotLinkException e) {
            return null;
        }
        String name = link.toString();
        if (!TIMESTAMPED_DIR.matcher(name).matches()) {
            return null;
        }
        Optional<PosixFileAttributes> attrs = target.attributes(name);
        if (attrs.isEmpty() || !attrs.get().isDirectory() || !attrs.get().owner().equals(writerUser(target))) {
            log.warn("{}: {} points to {}, which is not a directory this writer made; it is replaced, never followed",
                    targetDir, DATA_DIR, name);
            return null;
        }
        return name;
    }

    /**
     * The user whose directories this writer trusts: the process's own, the owner of every version it makes.
     * An in-memory file system (tests) has no process users; there it is the default owner of its files.
     */
    private UserPrincipal writerUser(OpenDir target) throws IOException {
        if (writerUser == null) {
            writerUser = targetDir.getFileSystem() == FileSystems.getDefault()
                    ? target.user(ProcessUser.effectiveUid())
                    : target.attributes().owner();
        }
        return writerUser;
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

    private static void deleteQuietly(OpenDir target, String name, Exception cause) {
        try {
            target.deleteTree(name);
        } catch (IOException | RuntimeException e) {
            cause.addSuppressed(e);
        }
    }
}
