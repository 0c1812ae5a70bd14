package io.satoken.agent.write;

import static java.nio.file.LinkOption.NOFOLLOW_LINKS;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.SeekableByteChannel;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.NotDirectoryException;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFileAttributes;
import java.nio.file.attribute.PosixFilePermission;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * How the published version (the timestamped dir {@code ..data} points to) differs from a new
 * payload: steps 3 and 4 of {@link AtomicWriter#write}, done in one walk of the old dir (AW-9, AW-10).
 *
 * <p>Only payload paths are read; a path that is not in the payload is noted without a stat. Once a
 * change is known, content is no longer read and directories are no longer entered. When the writer
 * itself published the old dir, it passes the paths it wrote there and the dir is not listed at all.
 */
final class VersionDiff {

    private final Map<String, FileContent> payload;
    private final Set<String> ancestors;
    private final int payloadSize;
    private final boolean unixView;

    private boolean changed;
    private boolean hasPathsToRemove;
    private int payloadFilesSeen;
    private final Set<String> topLevelToRemove = new LinkedHashSet<>();
    /** Every entry seen, children before their directory, so they can be deleted in this order. */
    private final List<Path> entries = new ArrayList<>();

    private VersionDiff(CleanPayload payload, boolean unixView) {
        this.payload = payload.files();
        this.ancestors = payload.ancestors();
        this.payloadSize = payload.files().size();
        this.unixView = unixView;
    }

    /**
     * Walks {@code oldDir} once against the cleaned payload.
     *
     * @param knownPaths the paths the writer put in {@code oldDir}, children before parents, or null to list it
     * @param unixView whether the file system has the {@code unix} attribute view (mode, uid, gid in one stat)
     */
    static VersionDiff compute(Path oldDir, List<String> knownPaths, CleanPayload payload, boolean unixView)
            throws IOException {
        VersionDiff diff = new VersionDiff(payload, unixView);
        try {
            if (knownPaths != null) {
                diff.visitKnown(oldDir, knownPaths);
            } else {
                diff.walk(oldDir, "");
            }
        } catch (NoSuchFileException e) {
            // ..data points to a dir that is gone: nothing to compare with or remove, write afresh
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

    /** The old dir's entries seen in the walk, children before parents; unvisited subtrees are not listed. */
    List<Path> entries() {
        return entries;
    }

    /** Like {@link #walk}, over the paths the writer knows it put there: its own dirs need no visit. */
    private void visitKnown(Path oldDir, List<String> knownPaths) throws IOException {
        for (String rel : knownPaths) {
            FileContent want = payload.get(rel);
            if (want != null) {
                payloadFilesSeen++;
                if (!changed && !sameFile(oldDir.resolve(rel), want)) {
                    changed = true;
                }
            } else if (!ancestors.contains(rel)) {
                hasPathsToRemove = true;
                if (rel.indexOf('/') < 0) {
                    topLevelToRemove.add(rel);
                }
            }
            entries.add(oldDir.resolve(rel));
        }
    }

    private void walk(Path dir, String prefix) throws IOException {
        try (DirectoryStream<Path> stream = Files.newDirectoryStream(dir)) {
            for (Path entry : stream) {
                String name = entry.getFileName().toString();
                String rel = prefix.isEmpty() ? name : prefix + '/' + name;
                FileContent want = payload.get(rel);
                if (want != null) {
                    payloadFilesSeen++;
                    if (!changed && !sameFile(entry, want)) {
                        changed = true;
                    }
                } else if (ancestors.contains(rel)) {
                    if (!changed) {
                        try {
                            walk(entry, rel);
                        } catch (NotDirectoryException e) {
                            changed = true; // AW-14: a file where the payload needs a dir
                        }
                    }
                } else {
                    hasPathsToRemove = true;
                    if (prefix.isEmpty()) {
                        topLevelToRemove.add(name);
                    }
                }
                entries.add(entry);
            }
        }
    }

    /**
     * Whether {@code file} already is {@code want}. Unlike upstream, mode and owner count too (a narrowed
     * mode must apply at once), and a directory where a file should be is a change, not an error (AW-14).
     */
    private boolean sameFile(Path file, FileContent want) throws IOException {
        try {
            return sameFileOrThrow(file, want);
        } catch (NoSuchFileException gone) {
            return false;
        }
    }

    private boolean sameFileOrThrow(Path file, FileContent want) throws IOException {
        long size;
        if (unixView) {
            Map<String, Object> attrs = Files.readAttributes(file, "unix:mode,uid,gid,size,isRegularFile", NOFOLLOW_LINKS);
            if (!(Boolean) attrs.get("isRegularFile")
                    || ((Integer) attrs.get("mode") & 0777) != want.mode()
                    || (want.uid() != null && !want.uid().equals(attrs.get("uid")))
                    || (want.gid() != null && !want.gid().equals(attrs.get("gid")))) {
                return false;
            }
            size = (Long) attrs.get("size");
        } else {
            PosixFileAttributes attrs = Files.readAttributes(file, PosixFileAttributes.class, NOFOLLOW_LINKS);
            if (!attrs.isRegularFile() || modeOf(attrs.permissions()) != want.mode()) {
                return false;
            }
            size = attrs.size();
        }
        byte[] data = want.sharedData();
        if (size != data.length) {
            return false;
        }
        ByteBuffer buffer = ByteBuffer.allocate(data.length);
        try (SeekableByteChannel channel = Files.newByteChannel(file)) {
            while (buffer.hasRemaining() && channel.read(buffer) >= 0) {
                // read until full or end of file
            }
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
