package io.satoken.agent.refresh;

import io.satoken.agent.projection.Projection;
import io.satoken.agent.projection.TokenDirectory;
import io.satoken.agent.token.CachedToken;
import io.satoken.agent.token.IssuedToken;
import io.satoken.agent.token.TokenCache;
import io.satoken.agent.token.TokenKey;
import io.satoken.agent.token.TokenSourceException;
import io.satoken.agent.write.AtomicWriter;
import io.satoken.agent.write.DirectoryWriter;
import io.satoken.agent.write.FileOwnerException;
import io.satoken.common.text.DurationText;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.time.InstantSource;
import java.util.ArrayList;
import java.util.Collection;
import java.util.EnumMap;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.function.Function;
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
 * <p>The token has one home, the {@link TokenCache}: this class keeps each key's schedule ({@link KeyRefresh}) and
 * each directory's record of what it wrote ({@link DirectoryOutput}), and reads the token from the cache when it
 * writes. {@link #put} answers with the directory's first write, as a future; the one {@link RefreshListener}
 * (several, through {@link RefreshListener#all}) only observes.
 *
 * <p>Work runs on the {@link TaskScheduler}'s threads. Two locks: {@code this} guards the maps and every
 * {@link KeyRefresh}; a directory's write lock ({@link DirectoryOutput#writeLock}) is taken before it, so
 * two tokens of one directory never race on disk.
 */
public final class RefreshScheduler implements AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(RefreshScheduler.class);

    private final TokenCache cache;
    private final TaskScheduler timers;
    private final Backoff backoff;
    private final InstantSource clock;
    private final RefreshListener listener;
    private final Function<Path, DirectoryWriter> writerFor;

    private final Map<String, DirectoryOutput> dirs = new HashMap<>();
    private final Map<TokenKey, KeyRefresh> keys = new HashMap<>();
    private boolean closed;

    /** Writes each directory with an {@link AtomicWriter}. */
    public RefreshScheduler(TokenCache cache, TaskScheduler timers, Backoff backoff, InstantSource clock,
            RefreshListener listener) {
        this(cache, timers, backoff, clock, listener, dir -> new AtomicWriter(dir, clock));
    }

    /** @param writerFor makes the writer of a directory, once per place a directory is registered at */
    public RefreshScheduler(TokenCache cache, TaskScheduler timers, Backoff backoff, InstantSource clock,
            RefreshListener listener, Function<Path, DirectoryWriter> writerFor) {
        this.cache = cache;
        this.timers = timers;
        this.backoff = backoff;
        this.clock = clock;
        this.listener = listener;
        this.writerFor = Objects.requireNonNull(writerFor, "writerFor");
    }

    /**
     * Adds a directory, or replaces the one with the same name; its tokens are fetched and written soon.
     *
     * @return completes when every file of the directory has been written once; fails, before that, with the
     *     {@link TokenSourceException} of a fetch that failed, or the {@link FileOwnerException} of a write the node
     *     refused (an owner or group it cannot give). Other write failures are retried and leave it pending. A
     *     directory replaced before its first write shares that first write with its replacement. Its failures after
     *     the first write are the listener's ({@link RefreshListener#refreshFailed})
     */
    public CompletableFuture<Void> put(TokenDirectory dir) {
        return register(dir, false).copy(); // the caller's own: completing it leaves the directory's as it is
    }

    /**
     * Adds a directory an earlier run of the agent wrote (a CSI volume resumed at start), as {@link #put} does; no one
     * waits for its first write, so every failure of its tokens, the first included, is the listener's
     * ({@link RefreshListener#refreshFailed}).
     */
    public void resume(TokenDirectory dir) {
        register(dir, true);
    }

    /** @return the directory's first write, done already when {@code writtenBefore} */
    private synchronized CompletableFuture<Void> register(TokenDirectory dir, boolean writtenBefore) {
        if (closed) {
            throw new IllegalStateException("scheduler is closed");
        }
        DirectoryOutput old = dirs.get(dir.name());
        DirectoryOutput output = old != null && old.dir().dir().equals(dir.dir())
                ? old.replacedBy(dir)
                : new DirectoryOutput(dir, writerFor.apply(dir.dir()), writtenBefore);
        dirs.put(dir.name(), output);
        Set<TokenKey> needed = dir.keys();
        if (old != null) {
            old.dir().keys().stream().filter(k -> !needed.contains(k)).forEach(k -> release(k, dir.name()));
        }
        for (TokenKey key : needed) {
            KeyRefresh state = keys.computeIfAbsent(key, KeyRefresh::new);
            state.addDir(dir.name());
            state.schedule(timers, clock.instant(), false, this::attempt);
        }
        return output.firstWrite();
    }

    /**
     * Fetches the keys' tokens now and writes every directory that holds them, whatever their refresh times: the
     * source has a newer token (the kubelet delivered one, with {@code tokenSource: kubelet}). Keys no directory
     * holds are ignored; an unchanged token rewrites nothing.
     */
    public synchronized void refreshNow(Collection<TokenKey> keys) {
        for (TokenKey key : keys) {
            KeyRefresh state = this.keys.get(key);
            if (state != null && !closed) {
                state.schedule(timers, clock.instant(), true, this::attempt);
            }
        }
    }

    /** Forgets a directory. Its files stay on disk; tokens no other directory uses are dropped. */
    public synchronized void remove(String name) {
        DirectoryOutput output = dirs.remove(name);
        if (output != null) {
            output.dir().keys().forEach(k -> release(k, name));
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
        for (DirectoryOutput output : dirs.values()) {
            for (Projection p : output.dir().projections()) {
                counts.merge(keys.get(p.key()).state(), 1, Integer::sum);
            }
        }
        return counts;
    }

    /** The expiry of the soonest-expiring token written to a directory, if any token is written. */
    public synchronized Optional<Instant> soonestExpiry() {
        return dirs.values().stream()
                .flatMap(output -> output.writtenTokens().stream())
                .map(IssuedToken::expiresAt)
                .min(Instant::compareTo);
    }

    /**
     * Each registered directory's files, by directory name, with their tokens' times, next attempts and last errors;
     * never a token.
     */
    public synchronized List<FileStatus.Directory> status() {
        List<FileStatus.Directory> all = new ArrayList<>(dirs.size());
        for (DirectoryOutput output : new TreeMap<>(dirs).values()) {
            List<FileStatus> files = new ArrayList<>();
            for (Projection p : output.dir().projections()) {
                files.add(FileStatus.of(p, keys.get(p.key()), output.writtenAt(p.path())));
            }
            all.add(new FileStatus.Directory(output.dir(), files));
        }
        return all;
    }

    /** True when every registered directory has had every one of its files written at least once. */
    public synchronized boolean allWritten() {
        return dirs.values().stream().allMatch(DirectoryOutput::complete);
    }

    /** True when each named directory is registered and has had every one of its files written. */
    public synchronized boolean allWritten(Collection<String> names) {
        return names.stream().map(dirs::get).allMatch(d -> d != null && d.complete());
    }

    /** Cancels every timer; registered directories keep their last files. */
    @Override
    public synchronized void close() {
        closed = true;
        keys.values().forEach(KeyRefresh::release);
        keys.clear();
        dirs.clear();
    }

    private void release(TokenKey key, String dirName) {
        KeyRefresh state = keys.get(key);
        if (state != null && state.removeDir(dirName)) {
            keys.remove(key);
            state.release();
            cache.invalidate(key);
        }
    }

    /** A timer fired: fetch the key's token, write every directory that holds it, then set the next timer. */
    private void attempt(KeyRefresh state, long generation, boolean force) {
        synchronized (this) {
            if (!state.started(generation)) {
                return; // removed or rescheduled since this timer was set
            }
        }
        TokenKey key = state.key();
        CachedToken cached;
        try {
            cached = force ? cache.refresh(key) : cache.get(key);
        } catch (TokenSourceException e) {
            List<DirectoryOutput> holders = holders(state, generation);
            listener.fetchFailed(key, holders.stream().map(DirectoryOutput::dir).toList(), e, false);
            holders.forEach(output -> fetchFailed(output, key, e, false));
            retryLater(state, generation, e.getMessage(), e, e.retryAfter(), e.permanent());
            return;
        }
        List<DirectoryOutput> holders;
        synchronized (this) {
            if (!state.fetched(generation)) {
                return;
            }
            holders = state.dirs().stream().map(dirs::get).toList();
        }
        List<String> writeErrors = new ArrayList<>();
        Exception writeError = null;
        for (DirectoryOutput output : holders) {
            try {
                write(output);
            } catch (IOException | RuntimeException e) {
                writeErrors.add(output.dir().name() + ": " + e.getMessage());
                writeError = writeError == null ? e : writeError;
                listener.writeFailed(output.dir(), e);
                failFirstWrite(output, e);
            }
        }
        TokenSourceException refreshError = cached.refreshError();
        if (refreshError != null) {
            listener.fetchFailed(key, holders.stream().map(DirectoryOutput::dir).toList(), refreshError, true);
            holders.forEach(output -> fetchFailed(output, key, refreshError, true));
            retryLater(state, generation, refreshError.getMessage() + "; serving the cached token, valid until "
                    + cached.token().expiresAt(), refreshError, refreshError.retryAfter(), refreshError.permanent());
        } else if (!writeErrors.isEmpty()) {
            retryLater(state, generation, "writing token " + key + " failed: " + writeErrors, writeError,
                    Optional.empty(), false);
        } else {
            synchronized (this) {
                if (state.succeeded(generation)) {
                    state.schedule(timers, cached.refreshAt(), true, this::attempt);
                }
            }
        }
    }

    /** The directories that need the key, if the attempt of this generation is still current. */
    private synchronized List<DirectoryOutput> holders(KeyRefresh state, long generation) {
        if (!state.isCurrent(generation)) {
            return List.of();
        }
        return state.dirs().stream().map(dirs::get).toList();
    }

    /**
     * A fetch for one of the directory's keys failed: its first write fails if it is pending, else the listener is
     * told it of this directory.
     */
    private void fetchFailed(DirectoryOutput output, TokenKey key, TokenSourceException error, boolean serving) {
        if (!output.firstWrite().completeExceptionally(error)) {
            listener.refreshFailed(output.dir(), key, error, serving);
        }
    }

    /**
     * A write of the directory failed. Before its first write is done, a refusal of the node (an owner or group it
     * cannot give) fails that write for good, since a retry would meet it again; other failures are retried.
     */
    private static void failFirstWrite(DirectoryOutput output, Exception error) {
        FileOwnerException refused = ownerRefusal(error);
        if (refused != null) {
            output.firstWrite().completeExceptionally(refused);
        }
    }

    private static FileOwnerException ownerRefusal(Throwable error) {
        for (Throwable t = error; t != null; t = t.getCause()) {
            if (t instanceof FileOwnerException e) {
                return e;
            }
        }
        return null;
    }

    /**
     * Schedules the next attempt after a failure, and says so in one log line: {@code why} gives the reason,
     * {@code cause} the stack trace at debug. A permanent refusal (403, 404, 422) waits the backoff cap at
     * once: asking again sooner would get the same answer.
     */
    private synchronized void retryLater(KeyRefresh state, long generation, String why, Exception cause,
            Optional<Duration> retryAfter, boolean permanent) {
        int failures = state.failed(generation, why, clock.instant());
        if (failures == 0) {
            return; // stale: the key was rescheduled or released meanwhile
        }
        Duration delay = backoff.delay(permanent ? Integer.MAX_VALUE : failures, retryAfter);
        log.warn("{} (attempt {}); retrying in {}", why, failures, DurationText.of(delay), cause);
        // A retry is not forced: if a valid token is cached and only the write failed, no new token is minted.
        state.schedule(timers, clock.instant().plus(delay), false, this::attempt);
    }

    /**
     * Writes the directory if the cache holds every token it needs; tells the listener which files changed, and
     * completes the directory's first write once every file is written.
     */
    private void write(DirectoryOutput output) throws IOException {
        synchronized (output.writeLock()) {
            Map<Projection, IssuedToken> tokens = new LinkedHashMap<>();
            synchronized (this) {
                if (dirs.get(output.dir().name()) != output) {
                    return; // removed or replaced meanwhile
                }
                for (Projection p : output.dir().projections()) {
                    KeyRefresh state = keys.get(p.key());
                    Optional<IssuedToken> token = state == null ? Optional.empty() : cache.current(p.key());
                    if (token.isEmpty()) {
                        return; // written once the last missing token arrives
                    }
                    tokens.put(p, token.get());
                }
            }
            output.write(tokens, listener);
        }
        if (output.complete()) {
            output.firstWrite().complete(null); // outside the locks: whoever waits may put or remove directories
        }
    }
}
