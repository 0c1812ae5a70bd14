package io.satoken.agent.write;

import static java.nio.file.LinkOption.NOFOLLOW_LINKS;

import io.satoken.common.kube.Failures;
import java.io.IOException;
import java.nio.file.FileSystemException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermission;
import java.util.Collection;
import java.util.EnumSet;
import java.util.Objects;
import java.util.Set;

/**
 * The group and mode of the directories that hold a set of token files: every process that the files' own
 * modes let read a file can reach it, as through kubelet's 0755 directories (AW-1), but no one else may list
 * them, and only the writer may change them.
 *
 * <p>POSIX checks a directory's classes in order and uses the first that matches: the owner's bits for its
 * owner (the writer; root needs no bits at all), else the group's bits for a member of its group (primary or
 * supplementary), else the others' bits. A process in the directory's group never gets the others' bits, so
 * a group class narrower than the others class locks out exactly the group's members: a container running
 * as user 1000 with primary group 0 (a pod without {@code runAsGroup} or {@code fsGroup}) was refused the
 * 0701 root:root directories that let every other user through. Hence:
 * <ol>
 *   <li>group = the gid every file has (a pod's fsGroup, PV-17, or a static projection's {@code gid}); none,
 *       leaving the writer's, when a file has no gid or two differ;</li>
 *   <li>mode = 0700, plus 0050 when there is a group (its members may list, as kubelet's fsGroup directories
 *       let them);</li>
 *   <li>plus 0010 when a file is readable by its group and that group is the directory's (the writer's
 *       when neither sets one): those readers are in the group class;</li>
 *   <li>plus 0011 (others and, never narrower, the group may pass through without listing) when a file is
 *       readable by a process of any group: its mode lets others read it, or it belongs to a user other than
 *       root who may read it (nothing tells whether that user is in the directory's group), or its group is
 *       another than the directory's.</li>
 * </ol>
 * So 0700, 0710, 0711, 0750 or 0751 (the group class always at least the others class): never listable by
 * others, never writable but by the writer. Passing through reaches only the names a process already knows,
 * and each file's own mode still decides who reads it, so a directory's x bit never lets in a reader the
 * file refuses. A volume's directories are, besides, visible only inside its pod and to root on the node.
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
        if ((mode & 0001) != 0 && (mode & 0010) == 0) {
            throw new IllegalArgumentException("mode: the group may not have less than others, or a process in the "
                    + "group is refused what any other user may do, got 0" + Integer.toOctalString(mode));
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
        for (FileOwnership f : files) {
            boolean groupReads = (f.mode() & 0040) != 0;
            boolean sameGroup = Objects.equals(f.gid(), group);
            boolean othersRead = (f.mode() & 0004) != 0;
            boolean otherOwnerReads = f.uid() != null && f.uid() != 0 && (f.mode() & 0400) != 0;
            if (groupReads && sameGroup) {
                mode |= 0010;                                                             // 3
            }
            if (othersRead || otherOwnerReads || (groupReads && !sameGroup)) {
                mode |= 0011;                                                             // 4
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
     *
     * @throws FileOwnerException when the group cannot be set
     */
    public void applyTo(Path dir) throws IOException {
        if (gid != null) {
            boolean unixView = unixView(dir);
            if (!unixView || !gid.equals(Files.getAttribute(dir, "unix:gid", NOFOLLOW_LINKS))) {
                setOwner(dir, true, gid, unixView);
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

    /**
     * Sets {@code file}'s group ({@code group} true) or owner to {@code id}, not following a link; fails with a
     * {@link FileOwnerException} that names the id.
     *
     * @param unixView whether the file system has the unix attribute view; without it nothing can be set
     */
    private static void setOwner(Path file, boolean group, int id, boolean unixView) throws FileOwnerException {
        if (!unixView) {
            throw new FileOwnerException(file, group, id, "the file system has no unix attribute view");
        }
        try {
            Files.setAttribute(file, group ? "unix:gid" : "unix:uid", id, NOFOLLOW_LINKS);
        } catch (FileSystemException e) {
            throw new FileOwnerException(file, group, id, e.getReason() == null ? Failures.inWords(e) : e.getReason());
        } catch (IOException | UnsupportedOperationException | IllegalArgumentException e) {
            throw new FileOwnerException(file, group, id, Failures.inWords(e));
        }
    }

    private static boolean unixView(Path dir) {
        return dir.getFileSystem().supportedFileAttributeViews().contains("unix");
    }

    @Override
    public String toString() {
        return String.format("%04o", mode) + (gid == null ? "" : " group " + gid);
    }

}
