package io.satoken.controlplane.injection;

import java.time.Duration;
import java.time.Instant;
import java.time.InstantSource;
import java.util.HashMap;
import java.util.Map;

/**
 * How fast the injection check may evict pods, namespace by namespace: in each, a token bucket of {@code burst}
 * evictions refilled at one per {@code interval}. A mass of unmutated pods (the webhook was down during a rollout) is
 * replaced at this pace, never all at once, and the pods of one namespace (one tenant's) never use up the repairs of
 * another. A namespace's bucket is dropped once it is full again, when it is the same as a new one: only the
 * namespaces that evicted within the last {@code burst} intervals are held.
 */
final class EvictionBudget {

    private final InstantSource clock;
    private final Duration interval;
    private final int burst;
    private final Map<String, Bucket> buckets = new HashMap<>();

    EvictionBudget(InstantSource clock, Duration interval, int burst) {
        this.clock = clock;
        this.interval = interval;
        this.burst = burst;
    }

    /** Takes one eviction in {@code namespace} if its budget has one. */
    synchronized boolean tryTake(String namespace) {
        Instant now = sweep();
        Bucket bucket = buckets.computeIfAbsent(namespace, n -> new Bucket(burst, now));
        if (bucket.tokens >= 1) {
            bucket.tokens -= 1;
            return true;
        }
        return false;
    }

    /** How many namespaces' buckets are held: those not yet full again. */
    synchronized int namespacesHeld() {
        sweep();
        return buckets.size();
    }

    /** Refills every bucket and drops the full ones; the time it refilled them to. */
    private Instant sweep() {
        Instant now = clock.instant();
        buckets.values().removeIf(b -> b.refill(now) >= burst);
        return now;
    }

    /** One namespace's bucket. */
    private final class Bucket {
        private double tokens;
        private Instant last;

        Bucket(double tokens, Instant last) {
            this.tokens = tokens;
            this.last = last;
        }

        /** Adds what the time since the last refill earned, up to {@code burst}; the tokens then held. */
        double refill(Instant now) {
            tokens = Math.min(burst, tokens + (double) Duration.between(last, now).toNanos() / interval.toNanos());
            last = now;
            return tokens;
        }
    }
}
