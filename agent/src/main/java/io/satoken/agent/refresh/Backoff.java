package io.satoken.agent.refresh;

import java.time.Duration;
import java.util.Optional;
import java.util.random.RandomGenerator;

/**
 * Capped exponential backoff with jitter for failed token requests.
 *
 * <p>After the n-th consecutive failure the base delay is {@code min(max, initial * 2^(n-1))}; the
 * delay is drawn uniformly from {@code [base/2, base]} ("equal jitter"), so retries from many tokens
 * that failed together spread out but never retry faster than half the base. A server's Retry-After
 * is a floor: the delay is never shorter than what the server asked for.
 */
public record Backoff(Duration initial, Duration max, RandomGenerator random) {

    public Backoff {
        if (initial.isNegative() || initial.isZero()) {
            throw new IllegalArgumentException("initial: must be positive, got " + initial);
        }
        if (max.compareTo(initial) < 0) {
            throw new IllegalArgumentException("max: must be at least initial (" + initial + "), got " + max);
        }
    }

    /** Delay before the next attempt after {@code failures} consecutive failures (1 = the first). */
    public Duration delay(int failures, Optional<Duration> retryAfter) {
        if (failures < 1) {
            throw new IllegalArgumentException("failures: must be at least 1, got " + failures);
        }
        Duration base = base(failures);
        long half = base.toMillis() / 2;
        Duration jittered = Duration.ofMillis(half + random.nextLong(base.toMillis() - half + 1));
        return retryAfter.filter(r -> r.compareTo(jittered) > 0).orElse(jittered);
    }

    /** The delay before jitter: doubles per failure, capped at {@code max}. */
    public Duration base(int failures) {
        int doublings = Math.min(failures - 1, 62);
        long factor = 1L << doublings;
        long millis = initial.toMillis() > max.toMillis() / factor ? max.toMillis() : initial.toMillis() * factor;
        return Duration.ofMillis(Math.min(millis, max.toMillis()));
    }
}
