package io.satoken.agent.reads;

import io.satoken.agent.projection.TokenDirectory;
import io.satoken.agent.refresh.RefreshListener;
import io.satoken.agent.refresh.TaskScheduler;
import io.satoken.agent.write.VersionObserver;
import java.io.IOException;
import java.nio.file.Path;
import java.time.InstantSource;
import java.util.function.BiConsumer;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The agent's read watching, as one part to build, start and stop: a {@link ReadTracker} fed by {@link Inotify},
 * holding at most {@link CappedWatches#DEFAULT_MAX} watches.
 * Turned off ({@code rereadCheck: false}), or where inotify cannot be used, it watches nothing and costs nothing;
 * tokens are written all the same.
 */
public final class ConsumerReads implements AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(ConsumerReads.class);

    private final ReadTracker tracker;
    private final CappedWatches watches;
    private volatile Inotify inotify;

    /** Watching nothing. */
    private ConsumerReads() {
        this.tracker = null;
        this.watches = null;
    }

    private ConsumerReads(int thresholdPercent, TaskScheduler timers, InstantSource clock,
            Consumer<ReadTracker.Finding> sink, BiConsumer<TokenDirectory, String> firstRead,
            ReadTracker.Escalation escalation) {
        this.watches = new CappedWatches(new InotifyWatches(), CappedWatches.DEFAULT_MAX);
        this.tracker = new ReadTracker(watches, timers, clock, thresholdPercent / 100.0, sink, firstRead, escalation);
    }

    /** Watching nothing. */
    public static ConsumerReads off() {
        return new ConsumerReads();
    }

    /**
     * @param thresholdPercent the share of the old token's lifetime a consumer has to open the new one
     * @param sink told of each consumer that did not
     * @param firstRead told when a file is first seen read (see {@link ReadTracker})
     * @param escalation the second report, before the held token expires
     */
    public static ConsumerReads on(int thresholdPercent, TaskScheduler timers, InstantSource clock,
            Consumer<ReadTracker.Finding> sink, BiConsumer<TokenDirectory, String> firstRead,
            ReadTracker.Escalation escalation) {
        return new ConsumerReads(thresholdPercent, timers, clock, sink, firstRead, escalation);
    }

    /** The tracker's watches go to the inotify instance once {@link #start} has opened it. */
    private final class InotifyWatches implements ReadTracker.Watches {
        @Override
        public int watchOpens(Path dir) throws IOException {
            Inotify open = inotify;
            if (open == null) {
                throw new IOException("inotify is not open");
            }
            return open.watchOpens(dir);
        }

        @Override
        public void unwatch(int wd) {
            Inotify open = inotify;
            if (open != null) {
                open.unwatch(wd);
            }
        }
    }

    /** Opens inotify; where it cannot be, says so once and watches nothing. Call before any token is written. */
    public void start() {
        if (tracker == null) {
            log.info("rereadCheck is off: consumers that do not re-read rotated tokens are not reported");
            return;
        }
        try {
            inotify = Inotify.open(new Inotify.Listener() {
                @Override
                public void opened(int wd, String name) {
                    tracker.opened(wd, name);
                }

                @Override
                public void ignored(int wd) {
                    watches.released(wd);
                    tracker.ignored(wd);
                }

                @Override
                public void overflow() {
                    tracker.overflow();
                }
            }, "satoken-reads");
        } catch (IOException e) {
            log.warn("cannot watch token files for reads ({}): consumers that do not re-read rotated tokens are not "
                    + "reported", e.getMessage());
        }
    }

    /** Whether reads are being watched. */
    public boolean watching() {
        return inotify != null;
    }

    /** The tracker, or null when off. */
    public ReadTracker tracker() {
        return tracker;
    }

    /** What the writers tell of their versions. */
    public VersionObserver observer() {
        return tracker == null ? VersionObserver.NONE : tracker;
    }

    /** What the scheduler tells of its tokens. */
    public RefreshListener listener() {
        return tracker == null ? RefreshListener.NONE : tracker;
    }

    @Override
    public void close() {
        Inotify open = inotify;
        inotify = null;
        if (open != null) {
            open.close();
        }
    }
}
