package io.satoken.e2e;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.stream.Stream;

/**
 * Scratch directories on a tmpfs ({@code /dev/shm}) for the tests that rotate tokens thousands of times:
 * a token dir in memory is what {@code /run/satoken} is, and it keeps those tests' I/O off the shared disk.
 * Falls back to {@code java.io.tmpdir} where there is no {@code /dev/shm}.
 */
final class MemoryDirs {

    private MemoryDirs() {
    }

    static Path create(String prefix) throws IOException {
        Path shm = Path.of("/dev/shm");
        Path parent = Files.isDirectory(shm) && Files.isWritable(shm) ? shm : Path.of(System.getProperty("java.io.tmpdir"));
        return Files.createTempDirectory(parent, "satoken-e2e-" + prefix + "-");
    }

    /** Removes {@code dir} and everything under it, links included (never followed). */
    static void delete(Path dir) {
        if (dir == null || !Files.exists(dir)) {
            return;
        }
        try (Stream<Path> walk = Files.walk(dir)) {
            for (Path p : walk.sorted(Comparator.reverseOrder()).toList()) {
                Files.deleteIfExists(p);
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
