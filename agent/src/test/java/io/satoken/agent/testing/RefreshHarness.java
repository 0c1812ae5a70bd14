package io.satoken.agent.testing;

import io.satoken.agent.refresh.Backoff;
import io.satoken.agent.refresh.RefreshListener;
import io.satoken.agent.token.RefreshPolicy;
import io.satoken.agent.refresh.RefreshScheduler;
import io.satoken.agent.refresh.TaskScheduler;
import io.satoken.agent.token.TokenCache;
import io.satoken.agent.token.TokenSourceException;
import io.satoken.agent.write.DirectoryWriter;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.time.InstantSource;
import java.util.Random;
import java.util.function.Function;

/**
 * The refresh wiring the agent's tests share: a {@link FakeClock} that is also the timers, a
 * {@link ScriptedTokenSource} on it issuing tokens valid for {@link #TTL}, a {@link TokenCache} that
 * refreshes at 80 % of a token's life with no jitter, a {@link Backoff} from 1 s doubling to 30 s pinned
 * to its longest draw, and a {@link RefreshScheduler} over them. Tests change only what the
 * {@link Builder} offers. Closing it closes the scheduler.
 */
public final class RefreshHarness implements AutoCloseable {

    /** Where the default clock starts. */
    public static final Instant START = Instant.parse("2026-01-01T00:00:00Z");
    /** How long the default source's tokens are valid. */
    public static final Duration TTL = Duration.ofHours(1);

    private final FakeClock fakeClock;
    private final ScriptedTokenSource source;
    private final TokenCache cache;
    private final RefreshScheduler scheduler;

    private RefreshHarness(Builder b) {
        InstantSource clock;
        TaskScheduler timers;
        if (b.timers != null) {
            this.fakeClock = null;
            clock = b.clock;
            timers = b.timers;
        } else {
            this.fakeClock = b.fakeClock != null ? b.fakeClock : new FakeClock(START);
            clock = fakeClock;
            timers = fakeClock;
        }
        this.source = b.source != null ? b.source : new ScriptedTokenSource(clock, TTL);
        if (b.sourceFailure != null) {
            source.failAlways(b.sourceFailure);
        }
        this.cache = new TokenCache(source, new RefreshPolicy(Duration.ZERO, 0, new Random()), clock);
        Backoff backoff = new Backoff(Duration.ofSeconds(1), Duration.ofSeconds(30), FixedRandom.highest());
        this.scheduler = b.writer == null
                ? new RefreshScheduler(cache, timers, backoff, clock, b.listener)
                : new RefreshScheduler(cache, timers, backoff, clock, b.listener, b.writer);
    }

    public static Builder builder() {
        return new Builder();
    }

    /** All defaults: its own fake clock at {@link #START}, its own source, no listener. */
    public static RefreshHarness standard() {
        return builder().build();
    }

    /** The fake clock and timers; only for a harness not built on {@link Builder#time}. */
    public FakeClock clock() {
        if (fakeClock == null) {
            throw new IllegalStateException("this harness runs on the clock it was given, not a FakeClock");
        }
        return fakeClock;
    }

    public ScriptedTokenSource source() {
        return source;
    }

    public TokenCache cache() {
        return cache;
    }

    public RefreshScheduler scheduler() {
        return scheduler;
    }

    @Override
    public void close() {
        scheduler.close();
    }

    /** The knobs tests turn; everything not set is the default described on {@link RefreshHarness}. */
    public static final class Builder {
        private FakeClock fakeClock;
        private InstantSource clock;
        private TaskScheduler timers;
        private ScriptedTokenSource source;
        private TokenSourceException sourceFailure;
        private RefreshListener listener = RefreshListener.NONE;
        private Function<Path, DirectoryWriter> writer;

        private Builder() {
        }

        /** A fake clock the test already has (shared with metrics, or with the harness of an earlier run). */
        public Builder clock(FakeClock clock) {
            this.fakeClock = clock;
            this.clock = null;
            this.timers = null;
            return this;
        }

        /** Other time: a real clock and real timers, say. */
        public Builder time(InstantSource clock, TaskScheduler timers) {
            this.fakeClock = null;
            this.clock = clock;
            this.timers = timers;
            return this;
        }

        /** A source the test already has; by default a new one on the harness's clock. */
        public Builder source(ScriptedTokenSource source) {
            this.source = source;
            return this;
        }

        /** Every call to the source fails with {@code error}, as for a test that expects none. */
        public Builder sourceFails(TokenSourceException error) {
            this.sourceFailure = error;
            return this;
        }

        public Builder listener(RefreshListener listener) {
            this.listener = listener;
            return this;
        }

        /** Makes each directory's writer; by default the scheduler's own {@code AtomicWriter}. */
        public Builder writer(Function<Path, DirectoryWriter> writer) {
            this.writer = writer;
            return this;
        }

        public RefreshHarness build() {
            return new RefreshHarness(this);
        }
    }
}
