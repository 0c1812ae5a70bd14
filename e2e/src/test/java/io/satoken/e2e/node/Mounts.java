package io.satoken.e2e.node;

import io.satoken.common.testing.MountTable;
import java.io.IOException;
import java.nio.file.Path;
import java.util.List;

/**
 * The mounts a node leaves under its directory (container rootfs overlays, sandbox shm, network-namespace
 * bind mounts, the kubelet's tmpfs volumes), found in {@code /proc/self/mountinfo} by {@link MountTable} and
 * unmounted deepest first, with {@code umount -l} when a plain unmount is refused.
 */
final class Mounts {

    private Mounts() {
    }

    /**
     * Unmounts everything at or under {@code dir}, deepest first; returns what is still mounted (empty when
     * all went). Never throws: it runs in cleanups, where one stuck mount must not stop the rest.
     */
    static List<Path> unmountAll(Path dir) {
        try {
            return MountTable.unmountAll(dir).left().stream().map(MountTable.Mount::point).toList();
        } catch (IOException e) {
            System.err.println("node: could not unmount under " + dir + ": " + e.getMessage());
            return List.of(dir);
        }
    }
}
