package io.satoken.agent.testing;

import io.satoken.agent.csi.Mounter;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.stream.Stream;

/**
 * A {@link Mounter} that mounts nothing: the "tmpfs" is the real (temporary) directory itself, so
 * writers and readers work unchanged. It records which directories are mounted, and unmounting empties
 * the directory, as a tmpfs going away would. It is stricter than mount(8): mounting on a missing or
 * non-empty directory, or twice at one place, fails, so a caller that would stack or hide mounts is caught.
 */
public final class FakeMounter implements Mounter {

    private final Set<Path> mounted = new LinkedHashSet<>();
    private final List<Path> mountCalls = new ArrayList<>();
    private final List<Path> unmountCalls = new ArrayList<>();
    private IOException failNextMount;

    @Override
    public synchronized void mountTmpfs(Path target) throws IOException {
        mountCalls.add(target);
        if (failNextMount != null) {
            IOException e = failNextMount;
            failNextMount = null;
            throw e;
        }
        if (!Files.isDirectory(target)) {
            throw new IOException("mount: " + target + ": mount point does not exist");
        }
        if (mounted.contains(target)) {
            throw new IOException("mount: " + target + ": a tmpfs of ours is already mounted there");
        }
        try (Stream<Path> entries = Files.list(target)) {
            if (entries.findAny().isPresent()) {
                throw new IOException("mount: " + target + ": not empty; a tmpfs would hide its files");
            }
        }
        mounted.add(target);
    }

    @Override
    public synchronized void unmount(Path target) throws IOException {
        unmountCalls.add(target);
        if (!mounted.remove(target)) {
            return;
        }
        try (Stream<Path> tree = Files.walk(target)) {
            for (Path p : tree.sorted(Comparator.reverseOrder()).toList()) {
                if (!p.equals(target)) {
                    Files.delete(p);
                }
            }
        }
    }

    @Override
    public synchronized boolean isMounted(Path target) {
        return mounted.contains(target);
    }

    /** The next mount fails with {@code error}. */
    public synchronized FakeMounter failNextMount(IOException error) {
        failNextMount = error;
        return this;
    }

    /** Where a tmpfs is mounted now. */
    public synchronized Set<Path> mounted() {
        return Set.copyOf(mounted);
    }

    /** Every mount asked for, failed or not, in order. */
    public synchronized List<Path> mountCalls() {
        return List.copyOf(mountCalls);
    }

    /** Every unmount asked for, in order, including those with nothing mounted. */
    public synchronized List<Path> unmountCalls() {
        return List.copyOf(unmountCalls);
    }
}
