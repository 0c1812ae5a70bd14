package io.satoken.agent.write;

import java.io.IOException;
import java.nio.file.DirectoryNotEmptyException;
import java.nio.file.DirectoryStream;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.Set;

/** Creates the directories token files live in. */
public final class Directories {

    /** Listable and traversable by the token's owner whoever that is; writable only by the agent. */
    public static final Set<PosixFilePermission> MODE = PosixFilePermissions.fromString("rwxr-xr-x");

    private Directories() {
    }

    /**
     * Deletes a file or a whole tree; a path already gone is fine. Links are deleted, never followed, so
     * a link inside the tree cannot make this delete anything outside it.
     */
    public static void delete(Path path) throws IOException {
        try {
            Files.deleteIfExists(path);
        } catch (DirectoryNotEmptyException e) {
            try (DirectoryStream<Path> children = Files.newDirectoryStream(path)) {
                for (Path child : children) {
                    delete(child);
                }
            }
            Files.deleteIfExists(path);
        }
    }

    /**
     * Creates {@code dir} and any missing parents with mode 0755, set explicitly after each mkdir: a
     * umask such as systemd's {@code UMask=0077} would otherwise leave them 0700, and a token's owner
     * could not reach its file. Directories that already exist keep their mode.
     */
    public static Path create(Path dir) throws IOException {
        Deque<Path> missing = new ArrayDeque<>();
        for (Path p = dir.toAbsolutePath(); p != null && !Files.isDirectory(p); p = p.getParent()) {
            missing.push(p);
        }
        while (!missing.isEmpty()) {
            Path p = missing.pop();
            try {
                Files.createDirectory(p);
                Files.setPosixFilePermissions(p, MODE);
            } catch (FileAlreadyExistsException e) {
                if (!Files.isDirectory(p, LinkOption.NOFOLLOW_LINKS) && !Files.isDirectory(p)) {
                    throw e; // a file is in the way
                }
            }
        }
        return dir;
    }
}
