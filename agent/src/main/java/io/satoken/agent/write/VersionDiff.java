package io.satoken.agent.write;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.SeekableByteChannel;
import java.nio.file.FileSystemException;
import java.nio.file.NoSuchFileException;
import java.nio.file.attribute.PosixFileAttributes;
import java.nio.file.attribute.PosixFilePermission;
import java.util.Arrays;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

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
final class VersionDiff {

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

    /** {@link #sameFile(OpenDir, String, FileContent)} for a path below {@code root}, each dir opened in turn. */
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
