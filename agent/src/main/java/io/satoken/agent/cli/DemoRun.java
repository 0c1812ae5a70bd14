package io.satoken.agent.cli;

import io.satoken.agent.config.AgentConfig;
import io.satoken.agent.projection.Projection;
import io.satoken.agent.projection.TokenDirectory;
import io.satoken.agent.reads.ConsumerReads;
import io.satoken.agent.reads.ReadTracker;
import io.satoken.agent.refresh.Backoff;
import io.satoken.agent.refresh.RefreshListener;
import io.satoken.agent.refresh.RefreshScheduler;
import io.satoken.agent.refresh.TaskScheduler;
import io.satoken.agent.status.StatusEndpoint;
import io.satoken.agent.token.IssuedToken;
import io.satoken.agent.token.RefreshPolicy;
import io.satoken.agent.token.TokenCache;
import io.satoken.agent.token.TokenInfo;
import io.satoken.agent.token.TokenSource;
import io.satoken.agent.write.AtomicWriter;
import java.io.IOException;
import java.io.PrintWriter;
import java.nio.file.Path;
import java.time.Duration;
import java.time.InstantSource;
import java.time.temporal.ChronoUnit;
import java.util.Random;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * What {@code satoken-agent demo} runs, on the clock and timers it is given: the token cache over a local issuer,
 * the refresh scheduler and the atomic writer (one line per write), the read watching that finds a file whose
 * reader did not open its rotated token (a {@code TokenNotReread} line, where the agent would send the Event), the
 * status endpoint {@code explain} asks, and, when asked for, a {@link StaleReader} of the first file.
 *
 * <p>Building it starts nothing and touches no file; {@link #start()} does.
 */
final class DemoRun implements AutoCloseable {

    private final InstantSource clock;
    private final PrintWriter out;
    private final TokenDirectory directory;
    private final ConsumerReads reads;
    private final RefreshScheduler scheduler;
    private final StatusEndpoint status;
    private final AtomicInteger writes = new AtomicInteger();
    private final AtomicInteger rotations = new AtomicInteger();
    private final AtomicInteger notReread = new AtomicInteger();
    private boolean serving;

    /**
     * @param socket where to serve the status endpoint, or null for none
     * @param staleReader whether a reader opens the directory's first file once and never again
     */
    DemoRun(TokenSource issuer, InstantSource clock, TaskScheduler timers, TokenDirectory directory, Path socket,
            boolean staleReader, PrintWriter out) {
        this.clock = clock;
        this.out = out;
        this.directory = directory;
        this.reads = ConsumerReads.on(AgentConfig.RereadCheck.DEFAULT_THRESHOLD, timers, clock, this::notReread,
                (dir, path) -> { }, ReadTracker.Escalation.NONE);
        RefreshListener reader = staleReader
                ? new StaleReader(firstFile(), clock, out)
                : RefreshListener.NONE;
        // the tracker hears of each token before the reader opens it
        this.scheduler = new RefreshScheduler(new TokenCache(issuer, RefreshPolicy.standard(), clock), timers,
                new Backoff(Duration.ofSeconds(1), Duration.ofSeconds(30), new Random()), clock,
                RefreshListener.all(new Report(), reads.listener(), reader),
                dir -> new AtomicWriter(dir, clock, reads.observer()));
        this.status = socket == null ? null : new StatusEndpoint(socket, null, scheduler,
                reads.tracker(), AgentConfig.RereadCheck.DEFAULT_THRESHOLD, clock);
    }

    /**
     * Starts watching reads, serves the status endpoint and writes the first tokens. A part that cannot start
     * (no inotify, a socket path too long to bind) is named in one line, and the tokens are written all the same.
     */
    void start() {
        reads.start();
        if (!reads.watching()) {
            print("reads are not watched here (inotify cannot be used): a reader that does not re-read is not found");
        }
        if (status != null) {
            try {
                status.start();
                serving = true;
            } catch (IOException e) {
                print("no status endpoint, so explain cannot ask this demo: " + e.getMessage());
            }
        }
        scheduler.put(directory);
    }

    /** Whether {@code explain} can ask this run. */
    boolean serving() {
        return serving;
    }

    /** The file the stale reader reads: the directory's first. */
    Path firstFile() {
        return directory.dir().resolve(directory.projections().get(0).path());
    }

    int writes() {
        return writes.get();
    }

    int rotations() {
        return rotations.get();
    }

    /** How many times a reader was found not to have opened its rotated token. */
    int notReread() {
        return notReread.get();
    }

    /** The read watching, for tests that wait for a read to be seen. */
    ReadTracker tracker() {
        return reads.tracker();
    }

    /** A file's reader did not open its new token by the threshold: the agent's TokenNotReread, as a line. */
    private void notReread(ReadTracker.Finding finding) {
        notReread.incrementAndGet();
        print("TokenNotReread " + finding.dir().dir().resolve(finding.projection().path())
                + ": not opened since its token rotated at " + finding.rotatedAt().truncatedTo(ChronoUnit.MILLIS)
                + "; its reader still holds the token that expires at " + finding.heldExpiresAt());
    }

    private void print(String line) {
        synchronized (out) {
            out.printf("%s %s%n", clock.instant().truncatedTo(ChronoUnit.MILLIS), line);
            out.flush();
        }
    }

    /** One line per write: path, audience, expiry and key id. Never the token. */
    private final class Report implements RefreshListener {
        @Override
        public void written(TokenDirectory dir, Projection p, IssuedToken token, boolean rotation) {
            writes.incrementAndGet();
            if (rotation) {
                rotations.incrementAndGet();
            }
            TokenInfo info = TokenInfo.parse(token.token());
            print(String.format("%s %s audience=%s expires=%s kid=%s", rotation ? "rotated" : "wrote  ",
                    dir.dir().resolve(p.path()), info.audiences(), info.expiresAt(), info.keyId()));
        }
    }

    @Override
    public void close() {
        if (status != null) {
            status.close();
        }
        scheduler.close();
        reads.close();
    }
}
