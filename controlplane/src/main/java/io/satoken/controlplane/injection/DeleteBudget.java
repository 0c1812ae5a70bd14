package io.satoken.controlplane.injection;

import java.time.Duration;
import java.time.Instant;
import java.time.InstantSource;

/**
 * How fast the injection check may delete pods: a token bucket of {@code burst} deletions refilled at one per
 * {@code interval}. A mass of unmutated pods (the webhook was down during a rollout) is replaced at this pace, never
 * all at once.
 */
final class DeleteBudget {

    private final InstantSource clock;
    private final Duration interval;
    private final int burst;
    private double tokens;
    private Instant last;

    DeleteBudget(InstantSource clock, Duration interval, int burst) {
        this.clock = clock;
        this.interval = interval;
        this.burst = burst;
        this.tokens = burst;
        this.last = clock.instant();
    }

    /** Takes one deletion if the budget has one. */
    synchronized boolean tryTake() {
        Instant now = clock.instant();
        tokens = Math.min(burst, tokens + (double) Duration.between(last, now).toNanos() / interval.toNanos());
        last = now;
        if (tokens >= 1) {
            tokens -= 1;
            return true;
        }
        return false;
    }
}
