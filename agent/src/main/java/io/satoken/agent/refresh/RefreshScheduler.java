package io.satoken.agent.refresh;

import io.satoken.agent.projection.Projection;
import io.satoken.agent.projection.TokenDirectory;
import io.satoken.agent.token.CachedToken;
import io.satoken.agent.token.IssuedToken;
import io.satoken.agent.token.TokenCache;
import io.satoken.agent.token.TokenKey;
import io.satoken.agent.token.TokenSourceException;
import io.satoken.agent.write.AtomicWriter;
import io.satoken.agent.write.FileContent;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.time.InstantSource;
import java.util.ArrayList;
import java.util.Collection;
import java.util.EnumMap;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Keeps every registered {@link TokenDirectory} holding valid tokens.
 *
 * <p>Each distinct {@link TokenKey} has at most one timer, set at its token's refresh time; there is
 * no polling loop. When it fires the token is refreshed and every directory holding it is rewritten.
 * A failed attempt is retried after a {@link Backoff} delay (honouring Retry-After) while the cache
 * keeps serving the still-valid token. Removing the last directory that uses a key cancels its timer
 * and drops its token.
 *
 * <p>Work runs on the {@link TaskScheduler}'s threads; the maps are guarded by {@code this}, and each
 * directory is written under its writer's lock so two tokens of one directory never race on disk.
 */
public final class RefreshScheduler implements AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(RefreshScheduler.class);

    private final TokenCache cache;
    private final TaskScheduler timers;
    private final Backoff backoff;
    private final InstantSource clock;
    private final RefreshListener listener;

    private final Map<String, DirState> dirs = new HashMap<>();
    private final Map<TokenKey, KeyState> keys = new HashMap<>();
    private boolean closed;

    public RefreshScheduler(TokenCache cache, TaskScheduler timers, Backoff backoff, InstantSource clock,
            RefreshListener listener) {
        this.cache = cache;
        this.timers = timers;
        this.backoff = backoff;
        this.clock = clock;
        this.listener = listener;
    }

    /** Adds a directory, or replaces the one with the same name; its tokens are fetched and written soon. */
    public synchronized void put(TokenDirectory dir) {
        if (closed) {
            throw new IllegalStateException("scheduler is closed");
        }
        DirState old = dirs.get(dir.name());
        DirState state = old != null && old.dir.dir().equals(dir.dir())
                ? old.replacedBy(dir)
                : new DirState(dir, new AtomicWriter(dir.dir(), clock));
        dirs.put(dir.name(), state);
        Set<TokenKey> needed = dir.keys();
        if (old != null) {
            old.dir.keys().stream().filter(k -> !needed.contains(k)).forEach(k -> release(k, dir.name()));
        }
        for (TokenKey key : needed) {
            keys.computeIfAbsent(key, k -> new KeyState()).dirs.add(dir.name());
            scheduleAttempt(key, clock.instant(), false);
        }
    }

    /** Forgets a directory. Its files stay on disk; tokens no other directory uses are dropped. */
    public synchronized void remove(String name) {
        DirState state = dirs.remove(name);
        if (state != null) {
            state.dir.keys().forEach(k -> release(k, name));
        }
    }

    /** The names of the registered directories. */
    public synchronized Set<String> names() {
        return Set.copyOf(dirs.keySet());
    }

    /** What a projection's token is doing, for the projections-by-state metric. */
    public enum State {
        /** No token yet, no failure yet. */
        PENDING,
        /** A token is written and its last refresh worked. */
        READY,
        /** A token is served, but refreshing it fails. */
        REFRESH_FAILING,
        /** No token could be fetched. */
        FAILED
    }

    /** How many projections (files) are in each state; every state is present. */
    public synchronized Map<State, Integer> projectionStates() {
        Map<State, Integer> counts = new EnumMap<>(State.class);
        for (State s : State.values()) {
            counts.put(s, 0);
        }
        for (DirState dir : dirs.values()) {
            for (Projection p : dir.dir.projections()) {
                KeyState key = keys.get(p.key());
                State s = key.token == null
                        ? (key.failures == 0 ? State.PENDING : State.FAILED)
                        : (key.failures == 0 ? State.READY : State.REFRESH_FAILING);
                counts.merge(s, 1, Integer::sum);
            }
        }
        return counts;
    }

    /** The expiry of the soonest-expiring token held for a directory, if any token is held. */
    public synchronized Optional<Instant> soonestExpiry() {
        return keys.values().stream()
                .filter(k -> k.token != null)
                .map(k -> k.token.expiresAt())
                .min(Instant::compareTo);
    }

    /** True when every registered directory has had every one of its files written at least once. */
    public synchronized boolean allWritten() {
        return dirs.values().stream().allMatch(DirState::complete);
    }

    /** True when each named directory is registered and has had every one of its files written. */
    public synchronized boolean allWritten(Collection<String> names) {
        return names.stream().map(dirs::get).allMatch(d -> d != null && d.complete());
    }

    /** Cancels every timer; registered directories keep their last files. */
    @Override
    public synchronized void close() {
        closed = true;
        keys.values().forEach(KeyState::cancelTimer);
        keys.clear();
        dirs.clear();
    }

    private void release(TokenKey key, String dirName) {
        KeyState state = keys.get(key);
        if (state != null && state.dirs.remove(dirName) && state.dirs.isEmpty()) {
            keys.remove(key);
            state.cancelTimer();
            cache.invalidate(key);
        }
    }

    /** Replaces the key's timer. {@code force}: the token is due, refresh even if the cache has it. */
    private void scheduleAttempt(TokenKey key, Instant at, boolean force) {
        KeyState state = keys.get(key);
        state.cancelTimer();
        long generation = ++state.generation;
        state.timer = timers.schedule(at, () -> attempt(key, generation, force));
    }

    private void attempt(TokenKey key, long generation, boolean force) {
        synchronized (this) {
            KeyState state = keys.get(key);
            if (state == null || state.generation != generation) {
                return; // removed or rescheduled since this timer was set
            }
            state.timer = null;
        }
        CachedToken cached;
        try {
            cached = force ? cache.refresh(key) : cache.get(key);
        } catch (TokenSourceException e) {
            listener.fetchFailed(key, holders(key, generation), e, false);
            retryLater(key, generation, e.getMessage(), e, e.retryAfter(), e.permanent());
            return;
        }
        List<DirState> holders;
        synchronized (this) {
            KeyState state = keys.get(key);
            if (state == null || state.generation != generation) {
                return;
            }
            state.token = cached.token();
            holders = state.dirs.stream().map(dirs::get).toList();
        }
        List<String> writeErrors = new ArrayList<>();
        Exception writeError = null;
        for (DirState dir : holders) {
            try {
                write(dir);
            } catch (IOException | RuntimeException e) {
                writeErrors.add(dir.dir.name() + ": " + e.getMessage());
                writeError = writeError == null ? e : writeError;
                listener.writeFailed(dir.dir, e);
            }
        }
        TokenSourceException refreshError = cached.refreshError();
        if (refreshError != null) {
            listener.fetchFailed(key, holders.stream().map(d -> d.dir).toList(), refreshError, true);
            retryLater(key, generation, refreshError.getMessage() + "; serving the cached token, valid until "
                    + cached.token().expiresAt(), refreshError, refreshError.retryAfter(), refreshError.permanent());
        } else if (!writeErrors.isEmpty()) {
            retryLater(key, generation, "writing token " + key + " failed: " + writeErrors, writeError, Optional.empty(),
                    false);
        } else {
            synchronized (this) {
                KeyState state = keys.get(key);
                if (state != null && state.generation == generation) {
                    state.failures = 0;
                    scheduleAttempt(key, cached.refreshAt(), true);
                }
            }
        }
    }

    /** The directories that need the key, if the attempt of this generation is still current. */
    private synchronized List<TokenDirectory> holders(TokenKey key, long generation) {
        KeyState state = keys.get(key);
        if (state == null || state.generation != generation) {
            return List.of();
        }
        return state.dirs.stream().map(name -> dirs.get(name).dir).toList();
    }

    /**
     * Schedules the next attempt after a failure, and says so in one log line: {@code why} gives the reason,
     * {@code cause} the stack trace at debug. A permanent refusal (403, 404, 422) waits the backoff cap at
     * once: asking again sooner would get the same answer.
     */
    private synchronized void retryLater(TokenKey key, long generation, String why, Exception cause,
            Optional<Duration> retryAfter, boolean permanent) {
        KeyState state = keys.get(key);
        if (state == null || state.generation != generation) {
            return;
        }
        state.failures++;
        Duration delay = backoff.delay(permanent ? Integer.MAX_VALUE : state.failures, retryAfter);
        log.warn("{} (attempt {}); retrying in {}", why, state.failures, readable(delay), cause);
        // A retry is not forced: if a valid token is cached and only the write failed, no new token is minted.
        scheduleAttempt(key, clock.instant().plus(delay), false);
    }

    /** {@code 670ms}, {@code 4.2s}, {@code 1m0s}: as the README and the flags write durations, not {@code PT0.67S}. */
    static String readable(Duration d) {
        long ms = d.toMillis();
        if (ms < 1000) {
            return ms + "ms";
        }
        if (ms < 60_000) {
            return String.format(Locale.ROOT, "%.1fs", ms / 1000.0);
        }
        return d.toMinutes() + "m" + d.toSecondsPart() + "s";
    }

    /** Writes the directory if every token it needs is known; tells the listener which files changed. */
    private void write(DirState dir) throws IOException {
        synchronized (dir.writer) { // shared with the DirState this one replaced
            Map<String, FileContent> payload = new LinkedHashMap<>();
            Map<Projection, IssuedToken> tokens = new LinkedHashMap<>();
            synchronized (this) {
                if (dirs.get(dir.dir.name()) != dir) {
                    return; // removed or replaced meanwhile
                }
                for (Projection p : dir.dir.projections()) {
                    KeyState state = keys.get(p.key());
                    if (state == null || state.token == null) {
                        return; // written once the last missing token arrives
                    }
                    tokens.put(p, state.token);
                }
            }
            tokens.forEach((p, token) -> payload.put(p.path(),
                    new FileContent(token.token().getBytes(StandardCharsets.UTF_8), p.mode(), p.uid(), p.gid())));
            boolean changed = dir.writer.write(payload);
            tokens.forEach((p, token) -> {
                IssuedToken before = dir.written.put(p.path(), token);
                // Unchanged on disk (a token adopted at restart, say) is not a write worth reporting.
                if (changed && before != token) {
                    listener.written(dir.dir, p, token, before != null && !before.token().equals(token.token()));
                }
            });
        }
    }

    private static final class KeyState {
        final Set<String> dirs = new LinkedHashSet<>();
        IssuedToken token;
        TaskScheduler.Cancellable timer;
        long generation;
        int failures;

        void cancelTimer() {
            if (timer != null) {
                timer.cancel();
                timer = null;
            }
        }
    }

    private static final class DirState {
        final TokenDirectory dir;
        final AtomicWriter writer;
        /** The token last written at each path, to report rotations. Updated under the writer's lock. */
        final Map<String, IssuedToken> written;

        DirState(TokenDirectory dir, AtomicWriter writer) {
            this(dir, writer, new ConcurrentHashMap<>());
        }

        private DirState(TokenDirectory dir, AtomicWriter writer, Map<String, IssuedToken> written) {
            this.dir = dir;
            this.writer = writer;
            this.written = written;
        }

        /**
         * Read under the scheduler's lock but not the writer's (taking both in this order could deadlock
         * with {@code write}); {@code written} is concurrent, and a stale answer only delays readiness.
         */
        boolean complete() {
            return dir.projections().stream().allMatch(p -> written.containsKey(p.path()));
        }

        DirState replacedBy(TokenDirectory next) {
            return new DirState(next, writer, written);
        }
    }
}
