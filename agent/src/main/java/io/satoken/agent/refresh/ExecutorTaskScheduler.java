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

    /** How long a thread with nothing due waits before it ends. */
    static final Duration IDLE_THREAD_LIFETIME = Duration.ofSeconds(60);

    private final InstantSource clock;
    private final ScheduledThreadPoolExecutor executor;

    public ExecutorTaskScheduler(InstantSource clock, int threads) {
        this(clock, threads, IDLE_THREAD_LIFETIME);
    }

    ExecutorTaskScheduler(InstantSource clock, int threads, Duration idleThreadLifetime) {
        this.clock = clock;
        AtomicInteger n = new AtomicInteger();
        this.executor = new ScheduledThreadPoolExecutor(threads, r -> {
            Thread t = new Thread(r, "satoken-refresh-" + n.incrementAndGet());
            t.setDaemon(true);
            return t;
        });
        executor.setRemoveOnCancelPolicy(true);
        // Between refreshes the threads are idle for most of a token's lifetime: they end after a minute
        // idle, but for one, which a pending task keeps (ThreadPoolExecutor never retires the last worker
        // while its queue holds a task), and come back when tasks are due together.
        executor.setKeepAliveTime(idleThreadLifetime.toMillis(), TimeUnit.MILLISECONDS);
        executor.allowCoreThreadTimeOut(true);
    }

    @Override
    public Cancellable schedule(Instant at, Runnable task) {
        long delayMillis = Math.max(0, Duration.between(clock.instant(), at).toMillis());
        ScheduledFuture<?> future = executor.schedule(task, delayMillis, TimeUnit.MILLISECONDS);
        return () -> future.cancel(false);
    }

    /** The threads alive now, busy or waiting. */
    int threads() {
        return executor.getPoolSize();
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
