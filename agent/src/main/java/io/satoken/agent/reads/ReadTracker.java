package io.satoken.agent.reads;

import io.satoken.agent.projection.Projection;
import io.satoken.agent.projection.TokenDirectory;
import io.satoken.agent.refresh.RefreshListener;
import io.satoken.agent.refresh.TaskScheduler;
import io.satoken.agent.token.IssuedToken;
import io.satoken.agent.write.VersionObserver;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.time.InstantSource;
import java.util.Collection;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.function.BiConsumer;
import java.util.function.Consumer;
import java.util.function.Function;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Sees whether each token file's consumer reads the new token after a rotation, and reports the ones that do not.
 *
 * <p>The writer tells it which timestamped version of a directory is current ({@link VersionObserver}), and it
 * watches that version's directories for opens ({@link Watches}: inotify, which sees opens through any mount of
 * the file, read-only ones included, since it follows the inode). An open of a file in the current version is a
 * read of the token it holds. The writer's own reads, when it compares a version with a new payload, are not
 * seen: the version's watches are removed first ({@link #comparing}).
 *
 * <p>When a file's token rotates, one timer is set at {@code threshold} of the old token's lifetime (at least a
 * tenth of that lifetime after the rotation). If by then the file's consumer has read it before but has not
 * opened the new token, the {@link Finding} goes to the sink: once per rotation, counted in {@link #reported()},
 * and held in {@link #notReread()} until the file is read or goes away. A file never seen read is not a
 * consumer's, so it is never reported: that includes a file whose only read came before the agent started.
 *
 * <p>No polling and no TokenRequest: the kernel reports opens, one timer per rotation. Thread-safe: events come on
 * the watcher's thread, versions on writers' threads, tokens on the scheduler's; the sink is called without the
 * lock held.
 */
public final class ReadTracker implements RefreshListener, VersionObserver {

    private static final Logger log = LoggerFactory.getLogger(ReadTracker.class);

    /** Watches directories for opens of their files. */
    public interface Watches {
        /** Starts watching {@code dir}; returns its watch descriptor. */
        int watchOpens(Path dir) throws IOException;

        /** Stops watching; the watcher then reports the descriptor {@link #ignored}. */
        void unwatch(int wd);
    }

    /**
     * A consumer that did not read its file's new token in time.
     *
     * @param rotatedAt when the new token was written
     * @param heldExpiresAt the expiry of the token the consumer still holds, the one it last read
     * @param lastRead when it last opened the file, before the rotation
     */
    public record Finding(TokenDirectory dir, Projection projection, Instant rotatedAt, Instant heldExpiresAt,
            Instant lastRead) { }

    /**
     * What is known of one file's reads, for the status endpoint.
     *
     * @param lastRead the consumer's last open of the file, in any version seen, or null when none was seen
     * @param hasReader whether the file is known to be read: seen opened, or recorded so before a restart
     * @param readCurrent whether the token now in the file has been opened
     * @param rotatedAt when the token now in the file replaced another, or null when it is the first seen
     * @param notRereadSince when the file was reported not re-read, or null when it is not (or no longer)
     * @param expiringUnreadSince when the file was reported still unread with its reader's token about to expire,
     *     or null when it is not (or no longer)
     */
    public record Reads(Instant lastRead, boolean hasReader, boolean readCurrent, Instant rotatedAt,
            Instant notRereadSince, Instant expiringUnreadSince) { }

    /**
     * The second, louder report: a consumer reported not re-read that still holds its old token when that token is
     * {@code margin} from expiring (never before the first report).
     *
     * @param margin how long before the held token's expiry to report, given that token's lifetime
     * @param sink told of each such consumer, once per rotation, without the tracker's lock held
     */
    public record Escalation(Function<Duration, Duration> margin, Consumer<Finding> sink) {

        /** No second report. */
        public static final Escalation NONE = new Escalation(lifetime -> Duration.ZERO, finding -> { });
    }

    private final Watches watches;
    private final TaskScheduler timers;
    private final InstantSource clock;
    private final double threshold;
    private final Consumer<Finding> sink;
    private final BiConsumer<TokenDirectory, String> firstRead;
    private final Escalation escalation;

    private final Map<Path, Target> targets = new HashMap<>();
    private final Map<Integer, Watch> byWd = new HashMap<>();
    private long reported;
    private int notReread;
    private long expiringReported;
    private int expiringUnread;
    private long watchFailures;

    /** One written directory: its current version, that version's watches and each file's reads. */
    private static final class Target {
        final Path dir;
        TokenDirectory directory;
        long version;
        /** The current version's watches, by descriptor, each with its directory's prefix in the payload. */
        final Map<Integer, String> wds = new HashMap<>();
        /** The current version's payload paths: an open of any other name in its directories is not a read. */
        Set<String> paths = Set.of();
        final Map<String, FileReads> files = new HashMap<>();

        Target(Path dir) {
            this.dir = dir;
        }
    }

    private record Watch(Target target, long version, String prefix) { }

    /** A tracker that keeps no record of which files have readers. */
    public ReadTracker(Watches watches, TaskScheduler timers, InstantSource clock, double threshold,
            Consumer<Finding> sink) {
        this(watches, timers, clock, threshold, sink, (dir, path) -> { });
    }

    /**
     * @param threshold the fraction of the old token's lifetime a consumer has to read the new one, in (0, 1)
     * @param sink told of each consumer that did not, without the tracker's lock held
     * @param firstRead told, without the lock held, when a file of a known directory is first seen read, to keep
     *     across a restart what {@link #consumers} is given back
     */
    public ReadTracker(Watches watches, TaskScheduler timers, InstantSource clock, double threshold,
            Consumer<Finding> sink, BiConsumer<TokenDirectory, String> firstRead) {
        this(watches, timers, clock, threshold, sink, firstRead, Escalation.NONE);
    }

    /** As above, with the second report ({@code TokenExpiringUnread}) before the held token expires. */
    public ReadTracker(Watches watches, TaskScheduler timers, InstantSource clock, double threshold,
            Consumer<Finding> sink, BiConsumer<TokenDirectory, String> firstRead, Escalation escalation) {
        if (!(threshold > 0 && threshold < 1)) {
            throw new IllegalArgumentException("threshold: must be between 0 and 1, got " + threshold);
        }
        this.watches = watches;
        this.timers = timers;
        this.clock = clock;
        this.threshold = threshold;
        this.sink = sink;
        this.firstRead = firstRead;
        this.escalation = escalation;
    }

    /** Files known, from before a restart, to have a reader: a rotation they miss is reported. */
    public synchronized void consumers(Path dir, Collection<String> paths) {
        Target target = targets.computeIfAbsent(dir, Target::new);
        paths.forEach(path -> target.files.computeIfAbsent(path, p -> new FileReads()).everRead = true);
    }

    // --- the writer ---------------------------------------------------------------------------------------------

    @Override
    public synchronized void comparing(Path targetDir, Path versionDir) {
        Target target = targets.get(targetDir);
        if (target != null) {
            // kept in byWd until the watcher says ignored: opens queued before this still count
            target.wds.keySet().forEach(watches::unwatch);
            target.wds.clear();
        }
    }

    @Override
    public synchronized void current(Path targetDir, Path versionDir, Collection<String> paths) {
        Target target = targets.computeIfAbsent(targetDir, Target::new);
        target.version++;
        target.wds.clear();
        target.paths = Set.copyOf(paths);
        Set<String> prefixes = new LinkedHashSet<>();
        paths.forEach(p -> prefixes.add(p.substring(0, p.lastIndexOf('/') + 1)));
        for (String prefix : prefixes) {
            Path dir = prefix.isEmpty() ? versionDir : versionDir.resolve(prefix);
            try {
                int wd = watches.watchOpens(dir);
                byWd.put(wd, new Watch(target, target.version, prefix));
                target.wds.put(wd, prefix);
            } catch (IOException e) {
                if (watchFailures++ == 0) {
                    log.warn("cannot watch {} for reads: {}; its consumers' reads go unseen (logged once)", dir,
                            e.getMessage());
                }
            }
        }
    }

    // --- the scheduler ------------------------------------------------------------------------------------------

    @Override
    public void written(TokenDirectory dir, Projection projection, IssuedToken token, boolean rotation) {
        synchronized (this) {
            Target target = targets.computeIfAbsent(dir.dir(), Target::new);
            target.directory = dir;
            FileReads file = target.files.computeIfAbsent(projection.path(), p -> new FileReads());
            IssuedToken previous = file.token;
            file.newToken(projection, token, target.version);
            if (!rotation || previous == null) {
                return;
            }
            Instant now = clock.instant();
            file.rotatedAt = now;
            Duration lifetime = previous.ttl();
            Instant due = previous.issuedAt().plusMillis((long) (lifetime.toMillis() * threshold));
            Instant earliest = now.plus(lifetime.dividedBy(10));
            long check = file.checks;
            Instant at = due.isBefore(earliest) ? earliest : due;
            file.check = timers.schedule(at, () -> check(target, file, check, previous));
            if (escalation != Escalation.NONE) {
                Instant escalate = previous.expiresAt().minus(escalation.margin().apply(lifetime));
                // never before the first report: when it would be due first, the check makes both reports
                file.escalateWithCheck = !escalate.isAfter(at);
                if (!file.escalateWithCheck) {
                    file.escalation = timers.schedule(escalate, () -> escalate(target, file, check, previous));
                }
            }
        }
    }

    @Override
    public synchronized void unchanged(TokenDirectory dir, Projection projection, IssuedToken token) {
        Target target = targets.computeIfAbsent(dir.dir(), Target::new);
        target.directory = dir;
        target.files.computeIfAbsent(projection.path(), p -> new FileReads()).newToken(projection, token, target.version);
    }

    // --- the watcher --------------------------------------------------------------------------------------------

    /** A consumer opened {@code name} in the watched directory {@code wd}. */
    public void opened(int wd, String name) {
        TokenDirectory first = null;
        String path;
        synchronized (this) {
            Watch watch = byWd.get(wd);
            if (watch == null) {
                return;
            }
            path = watch.prefix + name;
            if (!watch.target.paths.contains(path)) {
                // not a file the writer put there (a name planted in a writable volume): nothing to track
                return;
            }
            FileReads file = watch.target.files.computeIfAbsent(path, p -> new FileReads());
            if (!file.everRead) {
                first = watch.target.directory;
            }
            if (file.read(clock.instant(), watch.version) && file.flaggedAt != null) {
                file.flaggedAt = null;
                notReread--;
                if (file.expiringAt != null) {
                    file.expiringAt = null;
                    expiringUnread--;
                }
                log.info("{} was read again after it was reported not re-read", watch.target.dir.resolve(path));
            }
        }
        if (first != null) {
            firstRead.accept(first, path);
        }
    }

    /** A watch is gone: removed by {@link #comparing}, or its directory was deleted or unmounted. */
    public synchronized void ignored(int wd) {
        Watch watch = byWd.remove(wd);
        if (watch != null && watch.target.wds.remove(wd) != null && watch.target.wds.isEmpty()) {
            forget(watch.target); // the current version went away without a new one: the directory is gone
        }
    }

    /** Opens were lost: every file's current token is taken as read, so nothing is reported on a guess. */
    public synchronized void overflow() {
        log.warn("the kernel's queue of file opens overflowed; taking every token file as read since its rotation");
        for (Target target : targets.values()) {
            for (FileReads file : target.files.values()) {
                file.read(clock.instant(), target.version);
            }
        }
    }

    // --- what it knows ------------------------------------------------------------------------------------------

    /** The reads seen of {@code path} in the directory at {@code dir}, if the file is known. */
    public synchronized Optional<Reads> reads(Path dir, String path) {
        Target target = targets.get(dir);
        FileReads file = target == null ? null : target.files.get(path);
        return file == null ? Optional.empty() : Optional.of(file.snapshot());
    }

    /** Findings reported since the start. */
    public synchronized long reported() {
        return reported;
    }

    /** Files whose consumer was reported and has not read them since. */
    public synchronized int notReread() {
        return notReread;
    }

    /** Consumers reported still holding a token about to expire, since the start. */
    public synchronized long expiringReported() {
        return expiringReported;
    }

    /** Files whose consumer was reported still holding a token about to expire and has not opened them since. */
    public synchronized int expiringUnread() {
        return expiringUnread;
    }

    /** Directories being watched. */
    public synchronized int watchedDirectories() {
        return (int) targets.values().stream().filter(t -> !t.wds.isEmpty()).count();
    }

    private void check(Target target, FileReads file, long check, IssuedToken held) {
        Finding finding;
        synchronized (this) {
            if (file.checks != check || targets.get(target.dir) != target || !file.due() || file.flaggedAt != null) {
                return;
            }
            file.flaggedAt = clock.instant();
            reported++;
            notReread++;
            finding = new Finding(target.directory, file.projection, file.rotatedAt, held.expiresAt(), file.lastRead);
        }
        sink.accept(finding);
        if (file.escalateWithCheck) {
            escalate(target, file, check, held);
        }
    }

    /** The first report was made and the consumer has still not opened the new token: the second report. */
    private void escalate(Target target, FileReads file, long check, IssuedToken held) {
        Finding finding;
        synchronized (this) {
            if (file.checks != check || targets.get(target.dir) != target || !file.due() || file.flaggedAt == null
                    || file.expiringAt != null) {
                return;
            }
            file.expiringAt = clock.instant();
            expiringReported++;
            expiringUnread++;
            finding = new Finding(target.directory, file.projection, file.rotatedAt, held.expiresAt(), file.lastRead);
        }
        escalation.sink().accept(finding);
    }

    private void forget(Target target) {
        targets.remove(target.dir);
        for (FileReads file : target.files.values()) {
            file.cancelCheck();
            if (file.flaggedAt != null) {
                notReread--;
            }
            if (file.expiringAt != null) {
                expiringUnread--;
            }
        }
    }
}
