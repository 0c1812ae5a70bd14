package io.satoken.agent.write;

import static java.nio.file.LinkOption.NOFOLLOW_LINKS;
import static java.nio.file.StandardCopyOption.ATOMIC_MOVE;
import static java.nio.file.StandardCopyOption.REPLACE_EXISTING;

import java.io.IOException;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.NotLinkException;
import java.nio.file.Path;

/** The target dir's top-level links into {@code ..data} ({@code token -> ..data/token}): made when missing, removed only while ours. */
final class DataLinks {

    private final Path targetDir;

    DataLinks(Path targetDir) {
        this.targetDir = targetDir;
    }

    /**
     * Steps 8 and 9: {@code ..data_tmp -> versionDir} (a stale one, left by a crash, is replaced), then renamed over
     * {@code ..data}, the atomic publish (AW-12). On failure {@code ..data_tmp} is removed.
     */
    void switchData(String versionDir) throws IOException {
        Path tmp = targetDir.resolve(AtomicWriter.DATA_TMP);
        Path link = targetDir.getFileSystem().getPath(versionDir);
        try {
            Files.createSymbolicLink(tmp, link);
        } catch (FileAlreadyExistsException stale) {
            Files.delete(tmp);
            Files.createSymbolicLink(tmp, link);
        }
        try {
            Files.move(tmp, targetDir.resolve(AtomicWriter.DATA_DIR), ATOMIC_MOVE, REPLACE_EXISTING);
        } catch (IOException e) {
            try {
                Files.deleteIfExists(tmp);
            } catch (IOException | RuntimeException cleanup) {
                e.addSuppressed(cleanup);
            }
            throw e;
        }
    }

    /** Step 10: links each top-level name of the payload that is missing; an existing name is left alone (AW-4). */
    void createMissing(CleanPayload files) throws IOException {
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
     * Deletes a name (step 11, and {@code remove}) only while it is still our link: upstream removes whatever has the name,
     * which would take a user's own file that happens to reuse a dropped payload name.
     */
    void deleteOwn(String name) throws IOException {
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
        return targetDir.getFileSystem().getPath(AtomicWriter.DATA_DIR, name);
    }
}
