package io.satoken.controlplane.tokens;

import io.kubernetes.client.openapi.ApiException;
import io.satoken.controlplane.kube.ApiErrors;
import java.time.Duration;
import java.util.concurrent.ThreadLocalRandom;

/**
 * Re-runs a read-modify-write while the API server answers 409 Conflict, waiting a jittered pause between
 * tries, like upstream's {@code retry.RetryOnConflict}. Any other outcome ends it.
 */
final class ConflictRetry {

    /** How the pause is taken; tests pass one that does not sleep. */
    @FunctionalInterface
    interface Sleeper {
        void sleep(Duration d) throws InterruptedException;
    }

    /** One read-modify-write attempt. */
    @FunctionalInterface
    interface Attempt {
        void run() throws ApiException;
    }

    private final int steps;
    private final Duration pause;
    private final double jitter;
    private final Sleeper sleeper;

    ConflictRetry(int steps, Duration pause, double jitter, Sleeper sleeper) {
        this.steps = steps;
        this.pause = pause;
        this.jitter = jitter;
        this.sleeper = sleeper;
    }

    /** Removing a deleted Secret from its account: 10 tries, 100 ms apart plus up to 100 % jitter (spec 9). */
    static ConflictRetry removeReference() {
        return new ConflictRetry(10, Duration.ofMillis(100), 1.0, d -> Thread.sleep(d.toMillis()));
    }

    /** client-go's {@code retry.DefaultRetry}: 5 tries, 10 ms apart plus up to 10 % jitter (v1.17's reference add). */
    static ConflictRetry defaultRetry() {
        return new ConflictRetry(5, Duration.ofMillis(10), 0.1, d -> Thread.sleep(d.toMillis()));
    }

    /**
     * @throws ApiException the last Conflict when every try conflicted, or the first other error
     */
    void run(Attempt attempt) throws ApiException, InterruptedException {
        for (int i = 1; ; i++) {
            try {
                attempt.run();
                return;
            } catch (ApiException e) {
                if (!ApiErrors.isConflict(e) || i >= steps) {
                    throw e;
                }
            }
            long nanos = pause.toNanos();
            sleeper.sleep(Duration.ofNanos(nanos + (long) (nanos * jitter * ThreadLocalRandom.current().nextDouble())));
        }
    }
}
