package io.satoken.agent.reads;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.satoken.agent.testing.FakeClock;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The cap on the inotify watches read tracking holds: past it a directory goes unwatched (its readers unseen, its
 * tokens written all the same), and a watch given back, by the tracker or by the kernel, frees its place.
 */
class CappedWatchesTest {

    /** Hands out descriptors, as the kernel does, and records removals. */
    static final class CountingWatches implements ReadTracker.Watches {
        int next = 1;
        final List<Integer> removed = new ArrayList<>();

        @Override
        public int watchOpens(Path dir) {
            return next++;
        }

        @Override
        public void unwatch(int wd) {
            removed.add(wd);
        }
    }

    private final CountingWatches kernel = new CountingWatches();
    private final CappedWatches capped = new CappedWatches(kernel, 2);

    @Test
    void pastTheCap_aDirectoryIsNotWatched_andTheErrorSaysWhy() throws IOException {
        capped.watchOpens(Path.of("/a"));
        capped.watchOpens(Path.of("/b"));

        assertThatThrownBy(() -> capped.watchOpens(Path.of("/c"))).isInstanceOf(IOException.class)
                .hasMessage("not watching /c for opens: the agent holds 2 inotify watches, its cap (root's "
                        + "fs.inotify.max_user_watches is shared with the node's other root processes)");
        assertThat(kernel.next).as("the kernel was not asked").isEqualTo(3);
    }

    @Test
    void unwatched_orDroppedByTheKernel_freesItsPlace() throws IOException {
        int a = capped.watchOpens(Path.of("/a"));
        int b = capped.watchOpens(Path.of("/b"));

        capped.unwatch(a);
        capped.watchOpens(Path.of("/c"));
        capped.released(b); // its directory was unmounted
        capped.released(b); // and the tracker's own removal after that changes nothing
        capped.watchOpens(Path.of("/d"));

        assertThat(kernel.removed).containsExactly(a);
        assertThat(capped.held()).isEqualTo(2);
    }

    /** The tracker degrades to not tracking the directories past the cap; the others keep being tracked. */
    @Test
    void tracker_pastTheCap_watchesTheFirstDirectories_andTakesTheRotatedVersionOfAWatchedOne() {
        FakeClock clock = new FakeClock(Instant.parse("2026-01-01T00:00:00Z"));
        ReadTracker tracker = new ReadTracker(capped, clock, clock, 0.9, finding -> { });

        tracker.current(Path.of("/pods/a"), Path.of("/pods/a/..v1"), List.of("token"));
        tracker.current(Path.of("/pods/b"), Path.of("/pods/b/..v1"), List.of("token"));
        tracker.current(Path.of("/pods/c"), Path.of("/pods/c/..v1"), List.of("token"));
        assertThat(tracker.watchedDirectories()).isEqualTo(2);

        // a rotation of a watched directory: its old version's watch goes first, so the new one fits
        tracker.comparing(Path.of("/pods/a"), Path.of("/pods/a/..v1"));
        tracker.current(Path.of("/pods/a"), Path.of("/pods/a/..v2"), List.of("token"));
        assertThat(tracker.watchedDirectories()).isEqualTo(2);
        assertThat(capped.held()).isEqualTo(2);
    }
}
