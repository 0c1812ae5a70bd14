package io.satoken.agent.refresh;

import io.satoken.agent.token.TokenKey;
import java.time.Instant;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;

/**
 * One key's refresh state: the directories that need its token, its one timer and its run of failures. The token
 * itself is the {@code TokenCache}'s: this state only records that an attempt got one ({@link #fetched}).
 *
 * <p>Each timer is set in a new generation. An attempt runs without the scheduler's lock, so by the time it has a
 * result the key may have been rescheduled or released; every step of the attempt therefore names its generation
 * and is refused when that is no longer the key's current one ({@link #isCurrent}, the only place that check is
 * made). Not thread-safe: the {@link RefreshScheduler} calls it with its lock held.
 */
final class KeyRefresh {

    /** One attempt to fetch and write a key's token, as run by a timer. */
    @FunctionalInterface
    interface Attempt {
        /** {@code force}: the token is due, so refresh it even if the cache still has it. */
        void run(KeyRefresh key, long generation, boolean force);
    }

    private final TokenKey key;
    private final Set<String> dirs = new LinkedHashSet<>();
    private boolean fetched;
    private TaskScheduler.Cancellable timer;
    private long generation;
    private int failures;
    private boolean released;
    private Instant next;
    private String lastError;
    private Instant lastErrorAt;

    KeyRefresh(TokenKey key) {
        this.key = key;
    }

    TokenKey key() {
        return key;
    }

    /** The names of the directories that need this key's token, in the order they were put. */
    List<String> dirs() {
        return List.copyOf(dirs);
    }

    void addDir(String name) {
        dirs.add(name);
    }

    /** Forgets a directory; true when that was the last one, and so the key is no longer needed. */
    boolean removeDir(String name) {
        return dirs.remove(name) && dirs.isEmpty();
    }

    /** Replaces the key's timer with one that runs the attempt at {@code at}, in a new generation. */
    void schedule(TaskScheduler timers, Instant at, boolean force, Attempt attempt) {
        cancelTimer();
        long current = ++generation;
        next = at;
        timer = timers.schedule(at, () -> attempt.run(this, current, force));
    }

    /** True while the attempt of this generation is the key's latest and the key is still in use. */
    boolean isCurrent(long generation) {
        return !released && this.generation == generation;
    }

    /** The attempt's timer fired; false when the attempt is stale and must do nothing. */
    boolean started(long generation) {
        if (!isCurrent(generation)) {
            return false;
        }
        timer = null;
        next = null;
        return true;
    }

    /** The attempt got a token (now in the cache) to write; false when it is stale and must not write it. */
    boolean fetched(long generation) {
        if (!isCurrent(generation)) {
            return false;
        }
        fetched = true;
        return true;
    }

    /** The attempt fetched and wrote; false when it is stale and must not set the next timer. */
    boolean succeeded(long generation) {
        if (!isCurrent(generation)) {
            return false;
        }
        failures = 0;
        return true;
    }

    /**
     * Counts the attempt's failure: the failures in a row, or 0 when the attempt is stale and must not retry.
     *
     * @param why what failed, never holding a token; kept as the key's last error
     */
    int failed(long generation, String why, Instant at) {
        if (!isCurrent(generation)) {
            return 0;
        }
        lastError = why;
        lastErrorAt = at;
        return ++failures;
    }

    /** When the next attempt is due, or null while one runs. */
    Instant next() {
        return next;
    }

    /** The last failure's message, or null when none was seen; kept after later successes. */
    String lastError() {
        return lastError;
    }

    /** When the last failure happened, or null. */
    Instant lastErrorAt() {
        return lastErrorAt;
    }

    /** What the key's projections are doing, for the projections-by-state metric. */
    RefreshScheduler.State state() {
        if (!fetched) {
            return failures == 0 ? RefreshScheduler.State.PENDING : RefreshScheduler.State.FAILED;
        }
        return failures == 0 ? RefreshScheduler.State.READY : RefreshScheduler.State.REFRESH_FAILING;
    }

    /** The key is no longer needed: its timer is cancelled and any attempt in progress becomes stale. */
    void release() {
        released = true;
        cancelTimer();
    }

    private void cancelTimer() {
        if (timer != null) {
            timer.cancel();
            timer = null;
        }
    }
}
