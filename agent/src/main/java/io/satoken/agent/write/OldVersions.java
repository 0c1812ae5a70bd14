package io.satoken.agent.write;

import java.io.IOException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

/** Removes the versions a target dir no longer needs: the one just replaced, and crash leftovers (AtomicWriter's step 12). */
final class OldVersions {

    private OldVersions() {
    }

    /** Deletes the old dir using the entries its walk saw, so it is not listed a second time. */
    static void deleteOldDir(Path oldDir, List<Path> entries) throws IOException {
        for (Path entry : entries) {
            Directories.delete(entry);
        }
        Directories.delete(oldDir);
    }

    /** Deletes every timestamped dir in the target dir but {@code keep} (null: all), carrying on after an error. */
    static void deleteStrayDirs(Path targetDir, String keep) throws IOException {
        IOException failure = null;
        try (DirectoryStream<Path> stream = Files.newDirectoryStream(targetDir, OldVersions::isTimestampedDir)) {
            for (Path dir : stream) {
                if (!dir.getFileName().toString().equals(keep)) {
                    try {
                        Directories.delete(dir);
                    } catch (IOException e) {
                        failure = e;
                    }
                }
            }
        }
        if (failure != null) {
            throw failure;
        }
    }

    private static boolean isTimestampedDir(Path p) {
        return AtomicWriter.TIMESTAMPED_DIR.matcher(p.getFileName().toString()).matches();
    }
}
