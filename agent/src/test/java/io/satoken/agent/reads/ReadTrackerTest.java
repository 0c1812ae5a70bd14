package io.satoken.agent.reads;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.satoken.agent.projection.Projection;
import io.satoken.agent.projection.TokenDirectory;
import io.satoken.agent.testing.FakeClock;
import io.satoken.agent.token.BoundObjectRef;
import io.satoken.agent.token.IssuedToken;
import io.satoken.agent.token.TokenKey;
import io.satoken.agent.write.AtomicWriter;
import io.satoken.agent.write.FileContent;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@link ReadTracker} with the real writer on a temporary directory; opens are reported the way inotify reports
 * them (directory watch + name), by {@link PathWatches}. The kernel side is {@code InotifyTest}'s.
 */
class ReadTrackerTest {

    private static final Instant START = Instant.parse("2026-01-01T00:00:00Z");
    private static final Duration TTL = Duration.ofSeconds(600);

    @TempDir
    Path tmp;

    private final FakeClock clock = new FakeClock(START);
    private final PathWatches watches = new PathWatches();
    private final List<ReadTracker.Finding> findings = new ArrayList<>();
    private ReadTracker tracker;
    private AtomicWriter writer;
    private TokenDirectory dir;
    private Projection projection;
    private IssuedToken current;
    private int serial;

    @BeforeEach
    void setUp() {
        tracker = new ReadTracker(watches, clock, clock, 0.9, findings::add);
        writer = new AtomicWriter(tmp, clock, tracker);
        projection = new Projection(new TokenKey("ns", "app", List.of("vault"), TTL.toSeconds(),
                BoundObjectRef.pod("app", "uid-1")), "token", 0600, null, null);
        dir = new TokenDirectory("csi:vol-1", tmp, List.of(projection));
    }

    @Test
    void readOnce_notOpenedAfterTheRotation_isReportedAtNinetyPercentOfTheOldLifetime() throws IOException {
        IssuedToken first = readOnceThenRotateAfter(480);
        clock.advance(Duration.ofSeconds(59));
        assertThat(findings).as("before 90 %% of the first token's lifetime").isEmpty();

        clock.advance(Duration.ofSeconds(1));
        assertThat(findings).hasSize(1);
        ReadTracker.Finding finding = findings.get(0);
        assertThat(finding.projection().path()).isEqualTo("token");
        assertThat(finding.heldExpiresAt()).isEqualTo(first.expiresAt());
        assertThat(finding.rotatedAt()).isEqualTo(START.plusSeconds(480));
        assertThat(finding.lastRead()).isEqualTo(START);
        assertThat(tracker.reported()).isEqualTo(1);
        assertThat(tracker.notReread()).isEqualTo(1);
        assertThat(tracker.reads(tmp, "token")).hasValueSatisfying(r -> {
            assertThat(r.readCurrent()).isFalse();
            assertThat(r.notRereadSince()).isEqualTo(START.plusSeconds(540));
        });
    }

    @Test
    void consumer_thatOpensTheNewToken_isNotReported() throws IOException {
        readOnceThenRotateAfter(480);
        clock.advance(Duration.ofSeconds(5));
        consumerReads();
        clock.advance(Duration.ofSeconds(600));

        assertThat(findings).isEmpty();
        assertThat(tracker.reads(tmp, "token")).hasValueSatisfying(r -> {
            assertThat(r.readCurrent()).isTrue();
            assertThat(r.lastRead()).isEqualTo(START.plusSeconds(485));
        });
    }

    @Test
    void fileNeverRead_isNoConsumersAndIsNotReported_evenThoughTheWriterComparesItsOwnFiles() throws IOException {
        rotate();
        clock.advance(Duration.ofSeconds(480));
        rotate(); // same length: the writer reads the old file to compare it, which is not a consumer's read
        clock.advance(Duration.ofSeconds(600));

        assertThat(findings).isEmpty();
        assertThat(watches.unwatched).as("the old version's watch, removed before the writer compared").isNotEmpty();
    }

    @Test
    void readAfterTheReport_clearsTheNotRereadCount_butNotTheReportedTotal() throws IOException {
        readOnceThenRotateAfter(480);
        clock.advance(Duration.ofSeconds(70));
        assertThat(tracker.notReread()).isEqualTo(1);

        consumerReads();
        assertThat(tracker.notReread()).isZero();
        assertThat(tracker.reported()).isEqualTo(1);
    }

    @Test
    void rotationLate_inTheOldLifetime_givesTheConsumerATenthOfItBeforeTheCheck() throws IOException {
        readOnceThenRotateAfter(570); // refresh failed until 95 %
        clock.advance(Duration.ofSeconds(59));
        assertThat(findings).isEmpty();
        clock.advance(Duration.ofSeconds(1));
        assertThat(findings).hasSize(1);
    }

    @Test
    void secondRotation_beforeTheCheck_callsOffTheFirstCheck() throws IOException {
        readOnceThenRotateAfter(480);
        consumerReads();
        clock.advance(Duration.ofSeconds(10));
        rotate(); // e.g. the token was refreshed again early; its own check is due at 90 % of the second token
        clock.advance(Duration.ofSeconds(60));
        assertThat(findings).isEmpty();
    }

    @Test
    void directoryGone_forgetsItsFilesAndPendingChecks() throws IOException {
        readOnceThenRotateAfter(480);
        clock.advance(Duration.ofSeconds(70));
        assertThat(tracker.notReread()).isEqualTo(1);

        writer.remove(); // the volume is unpublished: its versions are deleted, the kernel drops their watches
        watches.deliver(tracker);
        assertThat(tracker.notReread()).isZero();
        assertThat(tracker.reads(tmp, "token")).isEmpty();
        assertThat(tracker.watchedDirectories()).isZero();
    }

    @Test
    void queueOverflow_takesEveryFileAsRead_soNothingIsReportedOnAGuess() throws IOException {
        readOnceThenRotateAfter(480);
        tracker.overflow();
        clock.advance(Duration.ofSeconds(120));
        assertThat(findings).isEmpty();
    }

    @Test
    void unchangedFirstToken_adoptedAtStart_isTheOneARotationReplaces() throws IOException {
        current = token();
        writer.write(Map.of("token", content(current)));
        watches.deliver(tracker);
        tracker.unchanged(dir, projection, current); // as the scheduler tells an adopted token
        consumerReads();
        clock.advance(Duration.ofSeconds(480));
        IssuedToken adopted = current;
        rotate();
        clock.advance(Duration.ofSeconds(60));
        assertThat(findings).singleElement().satisfies(f -> assertThat(f.heldExpiresAt()).isEqualTo(adopted.expiresAt()));
    }

    @Test
    void readerKnownFromBeforeARestart_missingTheRotation_isReported_andFirstReadsAreToldOnce() throws IOException {
        List<String> firstReads = new ArrayList<>();
        tracker = new ReadTracker(watches, clock, clock, 0.9, findings::add, (d, path) -> firstReads.add(path));
        writer = new AtomicWriter(tmp, clock, tracker);
        tracker.consumers(tmp, List.of("token")); // from the volume's record: read before this start
        rotate();
        clock.advance(Duration.ofSeconds(480));
        rotate();
        clock.advance(Duration.ofSeconds(60));
        assertThat(findings).hasSize(1);
        assertThat(firstReads).as("a reader already known is not told again").isEmpty();

        consumerReads();
        consumerReads();
        Path other = Files.createDirectories(tmp.resolve("other"));
        tracker = new ReadTracker(watches, clock, clock, 0.9, findings::add, (d, path) -> firstReads.add(path));
        writer = new AtomicWriter(other, clock, tracker);
        dir = new TokenDirectory("csi:vol-2", other, List.of(projection));
        current = null;
        rotate();
        watches.open(tracker, other.resolve("token"));
        watches.open(tracker, other.resolve("token"));
        assertThat(firstReads).containsExactly("token");
    }

    @Test
    void opensOfNamesTheWriterDidNotPut_areNotReads_andNeverGrowTheRecord() throws IOException {
        List<String> firstReads = new ArrayList<>();
        tracker = new ReadTracker(watches, clock, clock, 0.9, findings::add, (d, path) -> firstReads.add(path));
        writer = new AtomicWriter(tmp, clock, tracker);
        rotate();
        Path version = tmp.resolve("..data").toRealPath();
        for (int i = 0; i < 1000; i++) { // a pod with a writable volume floods it with names and opens them
            Path planted = Files.writeString(version.resolve("planted-" + i), "x");
            watches.open(tracker, planted);
        }

        assertThat(firstReads).isEmpty();
        assertThat(tracker.reads(tmp, "planted-0")).isEmpty();
        consumerReads();
        assertThat(firstReads).containsExactly("token");
    }

    @Test
    void threshold_outsideZeroToOne_isRefused() {
        assertThatThrownBy(() -> new ReadTracker(watches, clock, clock, 1.0, findings::add))
                .hasMessageContaining("threshold");
    }

    // --- the pieces -----------------------------------------------------------------------------

    /** The first token, read once by the consumer, then its rotation {@code seconds} later; returns the first. */
    private IssuedToken readOnceThenRotateAfter(long seconds) throws IOException {
        IssuedToken first = rotate();
        consumerReads();
        clock.advance(Duration.ofSeconds(seconds));
        rotate();
        return first;
    }

    /** Writes a new token as the scheduler's directory output does, and tells the tracker. */
    private IssuedToken rotate() throws IOException {
        IssuedToken before = current;
        current = token();
        boolean changed = writer.write(Map.of("token", content(current)));
        assertThat(changed).isTrue();
        watches.deliver(tracker);
        tracker.written(dir, projection, current, before != null);
        return current;
    }

    private IssuedToken token() {
        Instant now = clock.instant();
        // the same length each time, so that the writer compares contents
        return new IssuedToken(String.format("token-%06d", serial++), now, now.plus(TTL));
    }

    private static FileContent content(IssuedToken token) {
        return FileContent.of(token.token().getBytes(StandardCharsets.US_ASCII), 0600);
    }

    /** A consumer opens {@code token} through the links, as a pod does. */
    private void consumerReads() throws IOException {
        watches.open(tracker, tmp.resolve("token"));
    }

    /**
     * Watches by path, reporting what inotify would: an open of a file in a watched directory, by descriptor and
     * name; {@code ignored} for a removed watch or a deleted directory, later, when {@link #deliver} is called.
     */
    static final class PathWatches implements ReadTracker.Watches {
        final Map<Integer, Path> watched = new HashMap<>();
        final List<Integer> unwatched = new ArrayList<>();
        private final List<Integer> pending = new ArrayList<>();
        private int next = 1;

        @Override
        public int watchOpens(Path dir) throws IOException {
            if (!Files.isDirectory(dir)) {
                throw new NoSuchFileException(dir.toString());
            }
            for (Map.Entry<Integer, Path> e : watched.entrySet()) {
                if (e.getValue().equals(dir)) {
                    return e.getKey();
                }
            }
            watched.put(next, dir);
            return next++;
        }

        @Override
        public void unwatch(int wd) {
            if (watched.remove(wd) != null) {
                unwatched.add(wd);
                pending.add(wd);
            }
        }

        void open(ReadTracker tracker, Path file) throws IOException {
            Path real = file.toRealPath();
            watched.forEach((wd, dir) -> {
                if (dir.equals(real.getParent())) {
                    tracker.opened(wd, real.getFileName().toString());
                }
            });
        }

        void deliver(ReadTracker tracker) {
            watched.entrySet().removeIf(e -> {
                if (!Files.isDirectory(e.getValue())) {
                    pending.add(e.getKey());
                    return true;
                }
                return false;
            });
            List<Integer> now = new ArrayList<>(pending);
            pending.clear();
            now.forEach(tracker::ignored);
        }
    }
}
