package io.satoken.agent.write;

import static java.nio.file.LinkOption.NOFOLLOW_LINKS;
import static java.nio.file.StandardCopyOption.ATOMIC_MOVE;
import static java.nio.file.StandardCopyOption.REPLACE_EXISTING;

import io.satoken.common.paths.PayloadPath;
import io.satoken.common.paths.PayloadPathException;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.SeekableByteChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryNotEmptyException;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.FileSystemException;
import java.nio.file.FileSystems;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.NotDirectoryException;
import java.nio.file.NotLinkException;
import java.nio.file.Path;
import java.nio.file.attribute.FileAttribute;
import java.nio.file.attribute.PosixFileAttributeView;
import java.nio.file.attribute.PosixFileAttributes;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFilePermissions;
import java.nio.file.attribute.UserPrincipal;
import java.time.InstantSource;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.Comparator;
import java.util.EnumSet;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.SortedMap;
import java.util.TreeMap;
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
 *
 * <p>The whole algorithm is in this file, as upstream keeps it in {@code atomic_writer.go}: {@link #write}
 * numbers its steps, and the parts of each step follow it below in the same order. Every operation inside the
 * target dir that a link could redirect goes through {@link OpenDir}, the directory held open.
 */
public final class AtomicWriter implements DirectoryWriter {

    private static final Logger log = LoggerFactory.getLogger(AtomicWriter.class);

    static final String DATA_DIR = "..data";
    static final String DATA_TMP = "..data_tmp";
    /** AW-1: {@code ..} + UTC time + {@code .} + the temp-dir call's random digits. */
    static final Pattern TIMESTAMPED_DIR = Pattern.compile("\\.\\.\\d{4}(_\\d{2}){5}\\.\\d+");
    private static final DateTimeFormatter TIMESTAMP =
            DateTimeFormatter.ofPattern("uuuu_MM_dd_HH_mm_ss").withZone(ZoneOffset.UTC);
    /** Directories start private; {@link DirectoryAccess} then opens them to the files' readers. */
    private static final FileAttribute<Set<PosixFilePermission>> DIR_ATTRIBUTE =
            PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwx------"));
    private static final Path PROC_STATUS = Path.of("/proc/self/status");

    private final Path targetDir;
    private final InstantSource clock;
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
            createMissingLinks(files); // 10. only
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
                DIR_ATTRIBUTE);
        String newDirName = newDir.getFileName().toString();
        try {
            try (OpenDir version = target.openChild(newDirName)) {
                version.apply(access);
                // 6. AW-6
                writeFiles(version, files, access);
            }
            // 7.
            if (ownedByWriter(newDir)) {
                access.applyTo(targetDir);
            }
            observer.current(targetDir, newDir, files.files().keySet());
            switchData(newDirName); // 8. and 9. AW-12
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
        createMissingLinks(files);

        // 11. AW-13
        IOException failure = null;
        if (diff != null) {
            for (String name : diff.topLevelToRemove()) {
                try {
                    deleteOwnLink(name);
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
                deleteStrayDirs(target, newDirName);
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
                    deleteOwnLink(name);
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

    // ---- 1. The payload, validated and cleaned ----

    /**
     * A payload whose keys passed AW-15 and were cleaned (AW-7), with the directories they imply.
     *
     * @param files cleaned relative path to content, sorted so a dir's files are written together
     * @param ancestors every proper ancestor dir of a file: {@code a} and {@code a/b} for {@code a/b/c}
     */
    private record CleanPayload(SortedMap<String, FileContent> files, Set<String> ancestors) {

        /**
         * Validates and cleans every key. Beyond AW-15, two keys that clean to the same path (upstream
         * keeps whichever Go's map order gives last) and a file inside another file of the payload
         * (upstream fails half-way through writing) are rejected here, before any I/O.
         *
         * @throws PayloadPathException for the first bad key
         */
        static CleanPayload of(Map<String, FileContent> payload) {
            SortedMap<String, FileContent> files = new TreeMap<>();
            Map<String, String> given = new TreeMap<>();
            for (Map.Entry<String, FileContent> e : payload.entrySet()) {
                String path = PayloadPath.validateAndClean(e.getKey());
                Objects.requireNonNull(e.getValue(), () -> "payload[" + PayloadPath.quote(e.getKey()) + "]");
                String earlier = given.put(path, e.getKey());
                if (earlier != null) {
                    throw new PayloadPathException(e.getKey(),
                            "names the same file as " + PayloadPath.quote(earlier) + " after cleaning");
                }
                files.put(path, e.getValue());
            }
            Set<String> ancestors = new HashSet<>();
            for (String path : files.keySet()) {
                for (int slash = path.indexOf('/'); slash > 0; slash = path.indexOf('/', slash + 1)) {
                    String ancestor = path.substring(0, slash);
                    if (files.containsKey(ancestor)) {
                        throw new PayloadPathException(given.get(path),
                                "lies inside " + PayloadPath.quote(ancestor) + ", which is a file of the same payload");
                    }
                    ancestors.add(ancestor);
                }
            }
            return new CleanPayload(files, ancestors);
        }

        /** AW-4: the first element of each path, each once; these get the user-visible links. */
        Set<String> topLevelNames() {
            Set<String> names = new LinkedHashSet<>();
            for (String path : files.keySet()) {
                int slash = path.indexOf('/');
                names.add(slash < 0 ? path : path.substring(0, slash));
            }
            return names;
        }

        /** Files and their dirs, deepest first, so deleting them in this order empties each dir first. */
        List<String> pathsDeepestFirst() {
            List<String> paths = new ArrayList<>(files.size() + ancestors.size());
            paths.addAll(files.keySet());
            paths.addAll(ancestors);
            paths.sort(Comparator.comparingLong((String p) -> p.chars().filter(c -> c == '/').count()).reversed());
            return List.copyOf(paths);
        }
    }

    // ---- 2. The published version ----

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
                    ? target.user(effectiveUid())
                    : target.attributes().owner();
        }
        return writerUser;
    }

    /**
     * The user this process acts as, from the kernel: the effective uid, the second field of
     * {@code /proc/self/status}'s {@code Uid:} line (real, effective, saved, fs).
     */
    private static int effectiveUid() throws IOException {
        for (String line : Files.readAllLines(PROC_STATUS, StandardCharsets.US_ASCII)) {
            if (line.startsWith("Uid:")) {
                String[] fields = line.substring(4).trim().split("\\s+");
                if (fields.length >= 2) {
                    try {
                        return Integer.parseInt(fields[1]);
                    } catch (NumberFormatException e) {
                        break;
                    }
                }
            }
        }
        throw new IOException(PROC_STATUS + ": no effective uid in its Uid: line");
    }

    /** The files of the version this writer published, else (not known without a walk) those of the payload. */
    private Collection<String> publishedPaths(String dirName, CleanPayload payload) {
        return dirName.equals(publishedName) ? publishedPaths : payload.files().keySet();
    }

    // ---- 3. and 4. How the published version differs from the payload ----

    /**
     * How the published version (the timestamped dir {@code ..data} points to) differs from a new
     * payload: steps 3 and 4 of {@link AtomicWriter#write}, done in one walk of the old dir (AW-9, AW-10).
     *
     * <p>Only payload paths are read; a path that is not in the payload is noted without a stat. Once a
     * change is known, content is no longer read and directories are no longer entered. When the writer
     * itself published the old dir, it passes the paths it wrote there and the dir is not listed at all. Every
     * entry is reached through the directory above it, held open, and no link is followed ({@link OpenDir}): a
     * link where the payload has a file or a directory is a change, never a way out of the volume.
     */
    private static final class VersionDiff {

        private final Map<String, FileContent> payload;
        private final Set<String> ancestors;
        private final int payloadSize;

        private boolean changed;
        private boolean hasPathsToRemove;
        private int payloadFilesSeen;
        private final Set<String> topLevelToRemove = new LinkedHashSet<>();

        private VersionDiff(CleanPayload payload) {
            this.payload = payload.files();
            this.ancestors = payload.ancestors();
            this.payloadSize = payload.files().size();
        }

        /**
         * Walks the old dir once against the cleaned payload, through its open descriptor: no link in it is followed.
         *
         * @param knownPaths the paths the writer put in {@code oldDir}, children before parents, or null to list it
         */
        static VersionDiff compute(OpenDir oldDir, List<String> knownPaths, CleanPayload payload) throws IOException {
            VersionDiff diff = new VersionDiff(payload);
            try {
                if (knownPaths != null) {
                    diff.visitKnown(oldDir, knownPaths);
                } else {
                    diff.walk(oldDir, "");
                }
            } catch (NoSuchFileException e) {
                // a dir of the old version is gone: nothing to compare with, write afresh
                diff.changed = true;
            }
            if (diff.payloadFilesSeen < diff.payloadSize) {
                diff.changed = true; // AW-10: a payload file is missing in the old dir
            }
            return diff;
        }

        /** AW-10: some payload file is missing, differs in content, or (our difference) in mode, uid or gid. */
        boolean changed() {
            return changed;
        }

        /** AW-9: the old dir holds a path that is neither in the payload nor an ancestor of one. */
        boolean hasPathsToRemove() {
            return hasPathsToRemove;
        }

        /** AW-9, step 11: the top-level names of pathsToRemove, whose user-visible links must go. */
        Set<String> topLevelToRemove() {
            return topLevelToRemove;
        }

        /** Like {@link #walk}, over the paths the writer knows it put there: its own dirs need no listing. */
        private void visitKnown(OpenDir oldDir, List<String> knownPaths) throws IOException {
            for (String rel : knownPaths) {
                FileContent want = payload.get(rel);
                if (want != null) {
                    payloadFilesSeen++;
                    if (!changed && !sameFile(oldDir, rel, want)) {
                        changed = true;
                    }
                } else if (!ancestors.contains(rel)) {
                    hasPathsToRemove = true;
                    if (rel.indexOf('/') < 0) {
                        topLevelToRemove.add(rel);
                    }
                }
            }
        }

        private void walk(OpenDir dir, String prefix) throws IOException {
            for (String name : dir.names()) {
                String rel = prefix.isEmpty() ? name : prefix + '/' + name;
                FileContent want = payload.get(rel);
                if (want != null) {
                    payloadFilesSeen++;
                    if (!changed && !sameFile(dir, name, want)) {
                        changed = true;
                    }
                } else if (ancestors.contains(rel)) {
                    if (!changed) {
                        Optional<PosixFileAttributes> attrs = dir.attributes(name);
                        if (attrs.isPresent() && attrs.get().isDirectory()) {
                            try (OpenDir sub = dir.openChild(name)) {
                                walk(sub, rel);
                            }
                        } else {
                            changed = true; // AW-14: a file (or a link) where the payload needs a dir
                        }
                    }
                } else {
                    hasPathsToRemove = true;
                    if (prefix.isEmpty()) {
                        topLevelToRemove.add(name);
                    }
                }
            }
        }

        /** {@link #sameFileIn(OpenDir, String, FileContent)} for a path below {@code root}, each dir opened in turn. */
        private boolean sameFile(OpenDir root, String rel, FileContent want) throws IOException {
            int slash = rel.indexOf('/');
            if (slash < 0) {
                return sameFileIn(root, rel, want);
            }
            try (OpenDir sub = root.openChild(rel.substring(0, slash))) {
                return sameFile(sub, rel.substring(slash + 1), want);
            } catch (FileSystemException goneOrNotADir) { // a link is not followed: ELOOP
                return false;
            }
        }

        /**
         * Whether the entry {@code name} of {@code dir} already is {@code want}. Unlike upstream, mode and owner count
         * too (a narrowed mode must apply at once), and a directory or a link where a file should be is a change, not
         * an error (AW-14).
         */
        private static boolean sameFileIn(OpenDir dir, String name, FileContent want) throws IOException {
            Optional<PosixFileAttributes> found = dir.attributes(name);
            if (found.isEmpty()) {
                return false;
            }
            PosixFileAttributes attrs = found.get();
            if (!attrs.isRegularFile() || modeOf(attrs.permissions()) != want.mode()
                    || (want.uid() != null && !dir.user(want.uid()).equals(attrs.owner()))
                    || (want.gid() != null && !dir.group(want.gid()).equals(attrs.group()))) {
                return false;
            }
            byte[] data = want.sharedData();
            if (attrs.size() != data.length) {
                return false;
            }
            ByteBuffer buffer = ByteBuffer.allocate(data.length);
            try (SeekableByteChannel channel = dir.readFile(name)) {
                while (buffer.hasRemaining() && channel.read(buffer) >= 0) {
                    // read until full or end of file
                }
            } catch (NoSuchFileException gone) {
                return false;
            }
            return !buffer.hasRemaining() && Arrays.equals(buffer.array(), data);
        }

        private static int modeOf(Set<PosixFilePermission> permissions) {
            int mode = 0;
            for (PosixFilePermission p : permissions) {
                mode |= 0400 >> p.ordinal(); // the enum is declared from OWNER_READ down to OTHERS_EXECUTE
            }
            return mode;
        }
    }

    /** Whether the old dir, and the target dir when it is the writer's, already have the payload's access. */
    private boolean accessHeld(DirectoryAccess access, Path oldDir) throws IOException {
        return access.heldBy(oldDir) && (!ownedByWriter(oldDir) || access.heldBy(targetDir));
    }

    /**
     * Whether the target dir belongs to the user that made {@code ownDir}, the writer's: only then does the
     * writer set its access (step 7). A dir someone else made for the tokens keeps what they gave it.
     */
    private boolean ownedByWriter(Path ownDir) throws IOException {
        return Files.getOwner(targetDir).equals(Files.getOwner(ownDir, NOFOLLOW_LINKS));
    }

    // ---- 6. The new version's files ----

    /**
     * Step 6: writes every file of the payload into the open new version dir, each with its exact mode and owner,
     * making its subdirectories on the way. Every file is created, chmodded and chowned relative to the directory
     * that holds it, never by a path that a link could redirect (see {@link OpenDir}).
     */
    private static void writeFiles(OpenDir dir, CleanPayload files, DirectoryAccess access) throws IOException {
        Map<String, OpenDir> dirs = new HashMap<>();
        dirs.put("", dir);
        try {
            for (Map.Entry<String, FileContent> e : files.files().entrySet()) {
                String rel = e.getKey();
                FileContent content = e.getValue();
                int slash = rel.lastIndexOf('/');
                OpenDir parent = slash < 0 ? dir : subDir(dirs, rel.substring(0, slash), access);
                String name = rel.substring(slash + 1);
                Set<PosixFilePermission> mode = permissions(content.mode());
                // Created with its own mode, never the umask's default: a token must not be readable by
                // others even until the chmod. umask can only narrow it.
                try (SeekableByteChannel channel = parent.createFile(name, PosixFilePermissions.asFileAttribute(mode))) {
                    ByteBuffer data = ByteBuffer.wrap(content.sharedData());
                    while (data.hasRemaining()) {
                        channel.write(data);
                    }
                }
                PosixFileAttributeView view = parent.view(name);
                view.setPermissions(mode); // exactly the mode, whatever the umask took away
                if (content.uid() != null) {
                    parent.setOwner(name, false, content.uid());
                }
                if (content.gid() != null) {
                    parent.setOwner(name, true, content.gid());
                }
            }
        } finally {
            for (OpenDir open : dirs.values()) {
                if (open != dir) {
                    open.close();
                }
            }
        }
    }

    /** The open subdirectory {@code rel} of the version dir, made with the readers' access when new. */
    private static OpenDir subDir(Map<String, OpenDir> dirs, String rel, DirectoryAccess access) throws IOException {
        OpenDir open = dirs.get(rel);
        if (open != null) {
            return open;
        }
        int slash = rel.lastIndexOf('/');
        OpenDir parent = slash < 0 ? dirs.get("") : subDir(dirs, rel.substring(0, slash), access);
        String name = rel.substring(slash + 1);
        // No mkdirat in java.nio: made by path inside the dir just made, then opened through its parent's
        // descriptor without following a link, so nothing is written unless it is the directory made here.
        Files.createDirectory(parent.path().resolve(name), DIR_ATTRIBUTE);
        open = parent.openChild(name);
        dirs.put(rel, open);
        open.apply(access); // never writable but by the writer
        return open;
    }

    private static Set<PosixFilePermission> permissions(int mode) {
        Set<PosixFilePermission> set = EnumSet.noneOf(PosixFilePermission.class);
        for (PosixFilePermission p : PosixFilePermission.values()) {
            if ((mode & (0400 >> p.ordinal())) != 0) {
                set.add(p);
            }
        }
        return set;
    }

    // ---- 8. and 9. The swap of ..data ----

    /**
     * Steps 8 and 9: {@code ..data_tmp -> versionDir} (a stale one, left by a crash, is replaced), then renamed over
     * {@code ..data}, the atomic publish (AW-12). On failure {@code ..data_tmp} is removed.
     */
    private void switchData(String versionDir) throws IOException {
        Path tmp = targetDir.resolve(DATA_TMP);
        Path link = targetDir.getFileSystem().getPath(versionDir);
        try {
            Files.createSymbolicLink(tmp, link);
        } catch (FileAlreadyExistsException stale) {
            Files.delete(tmp);
            Files.createSymbolicLink(tmp, link);
        }
        try {
            Files.move(tmp, targetDir.resolve(DATA_DIR), ATOMIC_MOVE, REPLACE_EXISTING);
        } catch (IOException e) {
            try {
                Files.deleteIfExists(tmp);
            } catch (IOException | RuntimeException cleanup) {
                e.addSuppressed(cleanup);
            }
            throw e;
        }
    }

    // ---- 10. and 11. The user-visible links (token -> ..data/token): made when missing, removed only while ours ----

    /** Step 10: links each top-level name of the payload that is missing; an existing name is left alone (AW-4). */
    private void createMissingLinks(CleanPayload files) throws IOException {
        for (String name : files.topLevelNames()) {
            Path link = targetDir.resolve(name);
            if (!Files.exists(link, NOFOLLOW_LINKS)) {
                try {
                    Files.createSymbolicLink(link, linkTarget(name));
                } catch (FileAlreadyExistsException raced) {
                    // someone made the name meanwhile; an existing name is left as it is
                }
            }
        }
    }

    /**
     * Deletes a name (step 11, and {@link #remove}) only while it is still our link: upstream removes whatever has
     * the name, which would take a user's own file that happens to reuse a dropped payload name.
     */
    private void deleteOwnLink(String name) throws IOException {
        Path link = targetDir.resolve(name);
        try {
            if (Files.readSymbolicLink(link).equals(linkTarget(name))) {
                Files.delete(link);
            }
        } catch (NoSuchFileException | NotLinkException notOurs) {
            // already gone, or a real file or dir: not ours to remove
        }
    }

    private Path linkTarget(String name) {
        return targetDir.getFileSystem().getPath(DATA_DIR, name);
    }

    // ---- 12. Old versions: the one just replaced, and crash leftovers ----

    /** A stale {@code ..data_tmp} and every timestamped dir but {@code keep}; then no sweep is pending. */
    private void removeLeftovers(OpenDir target, String keep) throws IOException {
        Files.deleteIfExists(targetDir.resolve(DATA_TMP));
        deleteStrayDirs(target, keep);
        sweepPending = false;
    }

    /**
     * Deletes every timestamped dir in the target dir but {@code keep} (null: all), carrying on after an error. Each
     * is deleted through the open target dir, level by level, without following a link ({@link OpenDir#deleteTree(String)}).
     */
    private static void deleteStrayDirs(OpenDir targetDir, String keep) throws IOException {
        IOException failure = null;
        for (String name : targetDir.names()) {
            if (TIMESTAMPED_DIR.matcher(name).matches() && !name.equals(keep)) {
                try {
                    targetDir.deleteTree(name);
                } catch (IOException e) {
                    failure = e;
                }
            }
        }
        if (failure != null) {
            throw failure;
        }
    }

    private static void deleteQuietly(OpenDir target, String name, Exception cause) {
        try {
            target.deleteTree(name);
        } catch (IOException | RuntimeException e) {
            cause.addSuppressed(e);
        }
    }
}
