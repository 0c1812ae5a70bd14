package io.satoken.agent.bench;

import io.satoken.agent.refresh.TaskScheduler;
import java.time.Instant;
import java.time.InstantSource;
import java.util.PriorityQueue;

/**
 * Simulated time for a whole fleet: an {@link InstantSource} and the {@link TaskScheduler} every simulated agent's
 * refresh timers are set on. Timers run on the calling thread in time order, with the clock set to each one's
 * instant. Built for millions of timers: a cancelled timer is only marked and skipped when it comes due, and nothing
 * is kept of the timers that ran (the tests' {@code FakeClock} removes cancelled timers from its queue and records
 * every instant, both too costly at fleet scale).
 */
final class SimClock implements InstantSource, TaskScheduler {

    private static final class Timer implements Cancellable, Comparable<Timer> {
        final long atMillis;
        final long seq;
        Runnable task;

        Timer(long atMillis, long seq, Runnable task) {
            this.atMillis = atMillis;
            this.seq = seq;
            this.task = task;
        }

        @Override
        public void cancel() {
            task = null;
        }

        @Override
        public int compareTo(Timer o) {
            return atMillis != o.atMillis ? Long.compare(atMillis, o.atMillis) : Long.compare(seq, o.seq);
        }
    }

    private final PriorityQueue<Timer> timers = new PriorityQueue<>();
    private long nowMillis;
    private long seq;

    SimClock(Instant start) {
        this.nowMillis = start.toEpochMilli();
    }

    @Override
    public Instant instant() {
        return Instant.ofEpochMilli(nowMillis);
    }

    @Override
    public long millis() {
        return nowMillis;
    }

    @Override
    public Cancellable schedule(Instant at, Runnable task) {
        Timer timer = new Timer(Math.max(at.toEpochMilli(), nowMillis), seq++, task);
        timers.add(timer);
        return timer;
    }

    /** Runs every timer due up to {@code until}, in order, then sets the clock to it. */
    void runUntil(Instant until) {
        long end = until.toEpochMilli();
        while (!timers.isEmpty() && timers.peek().atMillis <= end) {
            Timer next = timers.poll();
            if (next.task != null) {
                nowMillis = next.atMillis;
                Runnable task = next.task;
                next.task = null;
                task.run();
            }
        }
        nowMillis = Math.max(nowMillis, end);
    }
}
