package io.satoken.agent.reads;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

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
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The read watching as the agent runs it: {@link ConsumerReads} on the kernel's inotify, the real writer, and a
 * fake clock for the checks. Opens arrive on inotify's thread, so each test waits, within a bound, for an open it
 * made to be seen; an open seen proves every open before it was seen too (one queue, read in order).
 */
class ConsumerReadsTest {

    private static final Instant START = Instant.parse("2026-01-01T00:00:00Z");
    private static final Duration TTL = Duration.ofSeconds(600);

    @TempDir
    Path tmp;

    private final FakeClock clock = new FakeClock(START);
    private final List<ReadTracker.Finding> findings = new CopyOnWriteArrayList<>();
    private ConsumerReads reads;
    private final List<Dir> dirs = new ArrayList<>();
    private int serial;

    /** One token directory and its writer. */
    private final class Dir {
        final Path path;
        final AtomicWriter writer;
        final TokenDirectory directory;
        final Projection projection;
        IssuedToken token;

        Dir(String name) throws IOException {
            path = Files.createDirectory(tmp.resolve(name));
            writer = new AtomicWriter(path, clock, reads.observer());
            projection = new Projection(new TokenKey("ns", name, List.of("vault"), TTL.toSeconds(),
                    BoundObjectRef.NONE), "token", 0600, null, null);
            directory = new TokenDirectory("static:" + path, path, List.of(projection));
        }

        /** A new token of the same length, written and told as the scheduler does. */
        void rotate() throws IOException {
            IssuedToken before = token;
            Instant now = clock.instant();
            token = new IssuedToken(String.format(Locale.ROOT, "token-%06d", serial++), now, now.plus(TTL));
            assertThat(writer.write(Map.of("token", FileContent.of(token.token().getBytes(StandardCharsets.US_ASCII),
                    0600)))).isTrue();
            reads.listener().written(directory, projection, token, before != null);
        }

        /** A consumer reads the file, and the test waits until the tracker has seen it. */
        void consumerReads() throws IOException {
            Files.readString(path.resolve("token"));
            awaitSeen(this);
        }

        ReadTracker.Reads reads() {
            return ConsumerReadsTest.this.reads.tracker().reads(path, "token").orElseThrow();
        }
    }

    @BeforeEach
    void start() {
        assumeTrue(System.getProperty("os.name").toLowerCase(Locale.ROOT).contains("linux"), "inotify is Linux's");
        reads = ConsumerReads.on(90, clock, clock, findings::add, (dir, path) -> { }, ReadTracker.Escalation.NONE);
        reads.start();
        assertThat(reads.watching()).as("inotify opened").isTrue();
    }

    @AfterEach
    void stop() {
        if (reads != null) {
            reads.close();
        }
    }

    @Test
    void writersOwnReads_whenItComparesTheOldVersion_areNotAConsumersReads() throws IOException {
        Dir unread = new Dir("unread");
        Dir marker = new Dir("marker");
        unread.rotate();
        marker.rotate();
        clock.advance(Duration.ofSeconds(480));
        unread.rotate(); // the same length: the writer opens the old file to compare contents
        marker.consumerReads(); // every open before this one has been seen
        clock.advance(Duration.ofSeconds(120));

        assertThat(findings).isEmpty();
        assertThat(unread.reads().lastRead()).as("reads seen of a file only the writer opened").isNull();
    }

    @Test
    void readOnce_throughTheKernel_isReportedAtTheThreshold_rereadIsNot() throws IOException {
        Dir once = new Dir("once");
        Dir again = new Dir("again");
        once.rotate();
        again.rotate();
        once.consumerReads();
        again.consumerReads();
        clock.advance(Duration.ofSeconds(480));
        once.rotate();
        again.rotate();
        again.consumerReads();
        clock.advance(Duration.ofSeconds(60));

        assertThat(findings).singleElement().satisfies(f -> assertThat(f.dir().dir()).isEqualTo(once.path));
        assertThat(reads.tracker().notReread()).isEqualTo(1);
        assertThat(again.reads().readCurrent()).isTrue();
    }

    private void awaitSeen(Dir dir) {
        Instant deadline = Instant.now().plusSeconds(10);
        Instant now = clock.instant();
        while (true) {
            ReadTracker.Reads seen = reads.tracker().reads(dir.path, "token").orElse(null);
            if (seen != null && seen.lastRead() != null && !seen.lastRead().isBefore(now) && seen.readCurrent()) {
                return;
            }
            assertThat(Instant.now()).as("the open of %s seen within 10 s", dir.path).isBefore(deadline);
            Thread.onSpinWait();
        }
    }
}
