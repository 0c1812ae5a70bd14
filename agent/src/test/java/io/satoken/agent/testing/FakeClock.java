package io.satoken.agent.testing;

import io.satoken.agent.refresh.TaskScheduler;
import java.time.Duration;
import java.time.Instant;
import java.time.InstantSource;
import java.util.ArrayList;
import java.util.List;
import java.util.PriorityQueue;

/**
 * A clock that moves only when told to, and a {@link TaskScheduler} whose timers fire as it moves.
 * Tasks run on the calling thread, in time order, with the clock set to each task's instant.
 */
public final class FakeClock implements InstantSource, TaskScheduler {

    private record Task(Instant at, long seq, Runnable run) { }

    private final PriorityQueue<Task> tasks = new PriorityQueue<>(
            (a, b) -> a.at.equals(b.at) ? Long.compare(a.seq, b.seq) : a.at.compareTo(b.at));
    private final List<Instant> fired = new ArrayList<>();
    private Instant now;
    private long seq;

    public FakeClock(Instant start) {
        this.now = start;
    }

    @Override
    public synchronized Instant instant() {
        return now;
    }

    @Override
    public synchronized Cancellable schedule(Instant at, Runnable task) {
        Task t = new Task(at.isBefore(now) ? now : at, seq++, task);
        tasks.add(t);
        return () -> {
            synchronized (FakeClock.this) {
                tasks.remove(t);
            }
        };
    }

    /** Moves time forward by {@code d}, running every timer that falls due on the way. */
    public void advance(Duration d) {
        Instant until;
        synchronized (this) {
            until = now.plus(d);
        }
        while (true) {
            Task next;
            synchronized (this) {
                next = tasks.peek();
                if (next == null || next.at.isAfter(until)) {
                    now = until;
                    return;
                }
                tasks.poll();
                now = next.at;
                fired.add(next.at);
            }
            next.run.run();
        }
    }

    /** Runs the timers due now without moving time. */
    public void runDue() {
        advance(Duration.ZERO);
    }

    public synchronized void set(Instant instant) {
        if (instant.isBefore(now)) {
            throw new IllegalArgumentException("time only moves forward: " + instant + " < " + now);
        }
        now = instant;
    }

    /** Timers scheduled and neither run nor cancelled. */
    public synchronized int pendingTimers() {
        return tasks.size();
    }

    /** When the next timer is due, or null. */
    public synchronized Instant nextTimer() {
        Task t = tasks.peek();
        return t == null ? null : t.at;
    }

    /** The instants at which timers have run, in order. */
    public synchronized List<Instant> firedAt() {
        return List.copyOf(fired);
    }
}
