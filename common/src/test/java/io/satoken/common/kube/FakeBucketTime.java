package io.satoken.common.kube;

import io.github.bucket4j.BlockingStrategy;
import io.github.bucket4j.TimeMeter;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * Time for a Bucket4j rate limiter that moves only when told to, or when a caller "waits": parking
 * records the wait and moves the time by it, so nothing sleeps.
 */
final class FakeBucketTime implements TimeMeter, BlockingStrategy {

    private long nanos;
    private final List<Duration> waits = new ArrayList<>();

    @Override
    public synchronized long currentTimeNanos() {
        return nanos;
    }

    @Override
    public boolean isWallClockBased() {
        return false;
    }

    @Override
    public synchronized void park(long waitNanos) {
        waits.add(Duration.ofNanos(waitNanos));
        nanos += waitNanos;
    }

    synchronized void advance(Duration d) {
        nanos += d.toNanos();
    }

    /** The waits so far, in order. */
    synchronized List<Duration> waits() {
        return List.copyOf(waits);
    }
}
