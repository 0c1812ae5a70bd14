package io.satoken.agent.bench;

import io.satoken.common.testing.MountTable;
import java.io.IOException;
import java.nio.file.FileStore;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

/**
 * The mounts under the load driver's temporary directory ({@link MountTable}): the agent
 * leaves its tmpfs mounts in place when it stops (a restarted agent adopts them), so the driver takes them
 * away itself, always, before it removes the directory; token files never outlive the run.
 */
final class BenchMounts {

    private BenchMounts() {
    }

    /** Mount points at or under {@code dir}, deepest first (a point mounted twice appears twice). */
    static List<Path> under(Path dir) throws IOException {
        return MountTable.under(dir).stream().map(MountTable.Mount::point).toList();
    }

    /** Bytes in use on the file systems mounted at {@code points} (statfs: total minus free), summed. */
    static long usedBytes(List<Path> points) throws IOException {
        long used = 0;
        for (Path point : points) {
            FileStore store = Files.getFileStore(point);
            used += store.getTotalSpace() - store.getUnallocatedSpace();
        }
        return used;
    }

    /**
     * Unmounts everything at or under {@code dir}, deepest first, lazily when a plain unmount is refused.
     * Never throws: it runs in a finally block and a shutdown hook.
     *
     * @return how many mounts were found, and how many are left (printed when not 0)
     */
    static int[] unmountAll(Path dir) {
        try {
            MountTable.Unmounted unmounted = MountTable.unmountAll(dir);
            List<MountTable.Mount> left = unmounted.left();
            if (!left.isEmpty()) {
                System.err.println("[bench] still mounted under " + dir + " after unmounting: " + left.size()
                        + " mount(s), e.g. " + left.get(0).point());
            }
            return new int[] {unmounted.found(), left.size()};
        } catch (IOException e) {
            System.err.println("[bench] could not unmount under " + dir + ": " + e);
            return new int[] {0, -1};
        }
    }
}
