package io.satoken.agent.write;

import static java.nio.file.LinkOption.NOFOLLOW_LINKS;

import java.io.IOException;
import java.nio.file.FileSystemException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermission;
import java.util.Collection;
import java.util.EnumSet;
import java.util.Set;

/**
 * The group and mode of the directories that hold a set of token files: traversable by the users who may
 * read the files, and by no one else as far as POSIX modes can say it. Owned by the writer, writable by
 * it alone.
 *
 * <ol>
 *   <li>group = the gid every file has (a pod's fsGroup, PV-17, or a static projection's {@code gid}); none
 *       when a file has no gid or two differ. Kubelet gives a projected volume's directories fsGroup as
 *       well; the files' owners are taken to be members of it, as every container of a pod is of its
 *       fsGroup;</li>
 *   <li>mode = 0700, plus 0050 when there is a group: 0750 {@code root:<gid>};</li>
 *   <li>plus 0001 (others may pass through, not list) when a file must be readable by users the group
 *       does not hold: its mode lets others read it, or, with no group, it belongs to another user (not
 *       root, who needs no permission) or lets another group read it. No mode can let one other user in
 *       alone, so such a file's own mode is what keeps everyone else out.</li>
 * </ol>
 * So 0700, 0701, 0750 or 0751; never listable by others, and never the 0755 of kubelet's AtomicWriter (AW-1).
 *
 * @param gid the group to set, or null to leave the writer's
 * @param mode the permission bits
 */
public record DirectoryAccess(Integer gid, int mode) {

    /** For no files at all, or files only the writer reads. */
    public static final DirectoryAccess WRITER_ONLY = new DirectoryAccess(null, 0700);

    public DirectoryAccess {
        if (gid != null && gid < 0) {
            throw new IllegalArgumentException("gid: must not be negative, got " + gid);
        }
        if ((mode & ~0751) != 0 || (mode & 0700) != 0700) {
            throw new IllegalArgumentException("mode: must be 0700 plus at most 0051, got 0" + Integer.toOctalString(mode));
        }
    }

    /** The access the directories of {@code files} get; see the class comment for the steps. */
    public static DirectoryAccess of(Collection<? extends FileOwnership> files) {
        Integer group = null;
        boolean first = true;
        for (FileOwnership f : files) {                                                   // 1
            if (first) {
                group = f.gid();
                first = false;
            } else if (group != null && !group.equals(f.gid())) {
                group = null;
            }
        }
        int mode = group == null ? 0700 : 0750;                                           // 2
        for (FileOwnership f : files) {                                                   // 3
            boolean others = (f.mode() & 0004) != 0;
            boolean owner = f.uid() != null && f.uid() != 0 && (f.mode() & 0400) != 0;
            boolean ownGroup = f.gid() != null && (f.mode() & 0040) != 0;
            if (others || (group == null && (owner || ownGroup))) {
                mode |= 0001;
            }
        }
        return new DirectoryAccess(group, mode);
    }

    /** Whether {@code dir} already has this group (when one is set) and exactly this mode. */
    public boolean heldBy(Path dir) throws IOException {
        if (!Files.getPosixFilePermissions(dir, NOFOLLOW_LINKS).equals(permissions())) {
            return false;
        }
        return gid == null || !unixView(dir) || gid.equals(Files.getAttribute(dir, "unix:gid", NOFOLLOW_LINKS));
    }

    /**
     * Gives {@code dir} this group, then this mode (the group first, so the mode is never wider than its
     * group's right to it). Needs CAP_CHOWN for a group the writer is not in, and to own {@code dir}.
     */
    public void applyTo(Path dir) throws IOException {
        if (gid != null) {
            if (!unixView(dir)) {
                throw new FileSystemException(dir.toString(), null,
                        "unix:gid: cannot set " + gid + ", the file system has no unix attribute view");
            }
            if (!gid.equals(Files.getAttribute(dir, "unix:gid", NOFOLLOW_LINKS))) {
                Files.setAttribute(dir, "unix:gid", gid, NOFOLLOW_LINKS);
            }
        }
        Files.setPosixFilePermissions(dir, permissions());
    }

    /** The mode as permissions. */
    public Set<PosixFilePermission> permissions() {
        Set<PosixFilePermission> set = EnumSet.noneOf(PosixFilePermission.class);
        for (PosixFilePermission p : PosixFilePermission.values()) {
            if ((mode & (0400 >> p.ordinal())) != 0) {
                set.add(p);
            }
        }
        return set;
    }

    private static boolean unixView(Path dir) {
        return dir.getFileSystem().supportedFileAttributeViews().contains("unix");
    }

    @Override
    public String toString() {
        return String.format("%04o", mode) + (gid == null ? "" : " group " + gid);
    }

}
