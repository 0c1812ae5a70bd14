package io.satoken.agent.write;

import java.io.IOException;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.attribute.FileAttribute;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.Set;

/** Creates the directories token files live in. */
public final class Directories {

    private static final FileAttribute<Set<PosixFilePermission>> PRIVATE =
            PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwx------"));

    private Directories() {
    }

    /**
     * Deletes a file or a whole tree; a path already gone is fine. Links are deleted, never followed, and each
     * level is reached through the directory above it, held open, so a link inside the tree, even one swapped in
     * while this runs, cannot make this delete anything outside it.
     */
    public static void delete(Path path) throws IOException {
        OpenDir.deleteTree(path);
    }

    /**
     * Creates {@code dir} and any missing parents, each private at first and then given {@code access},
     * the group and mode that let exactly the readers of the files below through: set explicitly, since a
     * umask such as systemd's {@code UMask=0077} would leave 0700 and a token's reader could not reach its
     * file. Directories that already exist keep their group and mode.
     */
    public static Path create(Path dir, DirectoryAccess access) throws IOException {
        Deque<Path> missing = new ArrayDeque<>();
        for (Path p = dir.toAbsolutePath(); p != null && !Files.isDirectory(p); p = p.getParent()) {
            missing.push(p);
        }
        while (!missing.isEmpty()) {
            Path p = missing.pop();
            try {
                Files.createDirectory(p, PRIVATE);
                access.applyTo(p);
            } catch (FileAlreadyExistsException e) {
                if (!Files.isDirectory(p, LinkOption.NOFOLLOW_LINKS) && !Files.isDirectory(p)) {
                    throw e; // a file is in the way
                }
            }
        }
        return dir;
    }
}
