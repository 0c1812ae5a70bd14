package io.satoken.agent.reads;

import java.io.IOException;
import java.nio.file.Path;
import java.util.HashSet;
import java.util.Set;

/**
 * Caps the inotify watches read tracking holds at once. The kernel's limit ({@code fs.inotify.max_user_watches})
 * is per user, and the agent's user is root, whose watches every other root process of the node shares; pods
 * declaring many token directories must not use them up. Past the cap a directory is simply not watched: its
 * readers go unseen (the tracker says so once), and its tokens are written as always.
 */
final class CappedWatches implements ReadTracker.Watches {

    /** At most this many: a third of the kernel's smallest default (8,192), 24 directories for each of 110 pods. */
    static final int DEFAULT_MAX = 2730;

    private final ReadTracker.Watches watches;
    private final int max;
    /** The descriptors held; one is given back when it is unwatched or the kernel drops it. */
    private final Set<Integer> held = new HashSet<>();

    CappedWatches(ReadTracker.Watches watches, int max) {
        if (max < 0) {
            throw new IllegalArgumentException("max: must not be negative, got " + max);
        }
        this.watches = watches;
        this.max = max;
    }

    @Override
    public synchronized int watchOpens(Path dir) throws IOException {
        if (held.size() >= max) {
            throw new IOException("not watching " + dir + " for opens: the agent holds " + max + " inotify watches, "
                    + "its cap (root's fs.inotify.max_user_watches is shared with the node's other root processes)");
        }
        int wd = watches.watchOpens(dir);
        held.add(wd);
        return wd;
    }

    @Override
    public synchronized void unwatch(int wd) {
        held.remove(wd);
        watches.unwatch(wd);
    }

    /** The kernel dropped the watch (its directory was removed or unmounted, or it was unwatched). */
    synchronized void released(int wd) {
        held.remove(wd);
    }

    /** Watches held now. */
    synchronized int held() {
        return held.size();
    }
}
