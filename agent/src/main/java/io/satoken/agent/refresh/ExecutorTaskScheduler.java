package io.satoken.agent.refresh;

import java.time.Duration;
import java.time.Instant;
import java.time.InstantSource;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * {@link TaskScheduler} on a small pool of daemon threads. Token calls block, so the pool has a few
 * threads; cancelled timers are removed from the queue at once so none linger after a projection goes.
 */
public final class ExecutorTaskScheduler implements TaskScheduler, AutoCloseable {

    private final InstantSource clock;
    private final ScheduledThreadPoolExecutor executor;

    public ExecutorTaskScheduler(InstantSource clock, int threads) {
        this.clock = clock;
        AtomicInteger n = new AtomicInteger();
        this.executor = new ScheduledThreadPoolExecutor(threads, r -> {
            Thread t = new Thread(r, "satoken-refresh-" + n.incrementAndGet());
            t.setDaemon(true);
            return t;
        });
        executor.setRemoveOnCancelPolicy(true);
    }

    @Override
    public Cancellable schedule(Instant at, Runnable task) {
        long delayMillis = Math.max(0, Duration.between(clock.instant(), at).toMillis());
        ScheduledFuture<?> future = executor.schedule(task, delayMillis, TimeUnit.MILLISECONDS);
        return () -> future.cancel(false);
    }

    /** Tasks scheduled and not yet run or cancelled. */
    public int pending() {
        return executor.getQueue().size();
    }

    /** Stops the timers and waits briefly for running tasks (a write in progress) to finish. */
    @Override
    public void close() {
        executor.shutdownNow();
        try {
            executor.awaitTermination(10, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
