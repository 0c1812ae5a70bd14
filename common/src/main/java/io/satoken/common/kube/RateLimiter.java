package io.satoken.common.kube;

import io.github.bucket4j.Bandwidth;
import io.github.bucket4j.BlockingStrategy;
import io.github.bucket4j.Bucket;
import io.github.bucket4j.TimeMeter;
import java.time.Duration;

/**
 * The agent's client-side limit on API requests, like client-go's QPS/burst token bucket: up to
 * {@code burst} requests at once, then {@code qps} per second. It protects the API server when
 * hundreds of pods start on a node at the same moment.
 *
 * <p>{@link #acquire()} blocks the calling thread until a slot is free, but never longer than
 * {@code maxWait}; a caller that would wait longer gets {@code false} at once and should retry later.
 */
public final class RateLimiter {

    public static final double DEFAULT_QPS = 20;
    public static final int DEFAULT_BURST = 40;
    public static final Duration DEFAULT_MAX_WAIT = Duration.ofSeconds(30);

    private final double qps;
    private final int burst;
    private final Duration maxWait;
    private final Bucket bucket;
    private final BlockingStrategy parking;

    public RateLimiter(double qps, int burst, Duration maxWait) {
        this(qps, burst, maxWait, TimeMeter.SYSTEM_NANOTIME, BlockingStrategy.PARKING);
    }

    /** For tests: a time source and a way to "wait" that can both be faked. */
    RateLimiter(double qps, int burst, Duration maxWait, TimeMeter time, BlockingStrategy parking) {
        if (!(qps > 0) || Double.isInfinite(qps)) {
            throw new IllegalArgumentException("qps: must be a positive number, got " + qps);
        }
        if (burst < 1) {
            throw new IllegalArgumentException("burst: must be at least 1, got " + burst);
        }
        if (maxWait.isNegative()) {
            throw new IllegalArgumentException("maxWait: must not be negative, got " + maxWait);
        }
        this.qps = qps;
        this.burst = burst;
        this.maxWait = maxWait;
        this.parking = parking;
        // One slot every 1/qps seconds, refilled greedily (as soon as each is due), so a fractional
        // qps works too; the bucket starts full, which is the burst.
        Duration perSlot = Duration.ofNanos(Math.max(1, Math.round(1e9 / qps)));
        this.bucket = Bucket.builder()
                .addLimit(Bandwidth.builder().capacity(burst).refillGreedy(1, perSlot).build())
                .withCustomTimePrecision(time)
                .build();
    }

    public static RateLimiter defaults() {
        return new RateLimiter(DEFAULT_QPS, DEFAULT_BURST, DEFAULT_MAX_WAIT);
    }

    /**
     * Takes one request slot, waiting for it when the burst is used up.
     *
     * @return false when no slot frees up within {@code maxWait}; nothing was taken then
     * @throws InterruptedException when interrupted while waiting
     */
    public boolean acquire() throws InterruptedException {
        if (maxWait.isZero()) {
            return bucket.tryConsume(1); // Bucket4j's blocking call insists on a positive wait
        }
        return bucket.asBlocking().tryConsume(1, maxWait, parking);
    }

    public Duration maxWait() {
        return maxWait;
    }

    @Override
    public String toString() {
        return qps + " qps, burst " + burst;
    }
}
