package io.satoken.agent.refresh;

import java.time.Instant;

/** Runs a task at an instant. The seam that lets tests drive timers with a fake clock. */
@FunctionalInterface
public interface TaskScheduler {

    /** Runs {@code task} at (or, if that has passed, as soon as possible after) {@code at}. */
    Cancellable schedule(Instant at, Runnable task);

    /** A scheduled task that can still be called off. */
    @FunctionalInterface
    interface Cancellable {
        void cancel();
    }
}
