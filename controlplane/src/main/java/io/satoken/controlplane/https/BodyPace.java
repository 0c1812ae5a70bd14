package io.satoken.controlplane.https;

import java.time.Duration;

/**
 * The pace a request body must keep while it holds a claim on the {@link BodyBudget}. After a grace period it must
 * arrive at {@code minBytesPerSecond} or more, and fast enough to be whole before the request deadline: a body that
 * cannot make the deadline at the pace it keeps would be refused there anyway (408), so it is refused as soon as
 * that is clear and its claim is given back, instead of holding the claim for the whole deadline. The API server
 * sends a body from memory in one go; only a stalled or hostile sender falls behind.
 *
 * @param minBytesPerSecond the slowest pace any body may keep after the grace period
 * @param grace how long after its headers a body may be slower (a TCP window filling, a first packet lost)
 * @param requestTimeout the request deadline, which the body must make
 */
record BodyPace(long minBytesPerSecond, Duration grace, Duration requestTimeout) {

    private static final long NANOS_PER_SECOND = 1_000_000_000L;

    BodyPace {
        if (minBytesPerSecond <= 0 || grace.isNegative() || requestTimeout.compareTo(grace) <= 0) {
            throw new IllegalArgumentException("a body pace needs a positive rate and a grace shorter than the "
                    + "request deadline, got " + minBytesPerSecond + " bytes/s, " + grace + " and " + requestTimeout);
        }
    }

    /** The pace a body claiming {@code claimed} bytes must keep after the grace period, in bytes per second. */
    long bytesPerSecond(long claimed) {
        long toMakeTheDeadline = (long) Math.ceil(claimed * (double) NANOS_PER_SECOND
                / requestTimeout.minus(grace).toNanos());
        return Math.max(minBytesPerSecond, toMakeTheDeadline);
    }

    /** The bytes of a body claiming {@code claimed} that must have arrived {@code elapsed} after its headers. */
    long required(long claimed, Duration elapsed) {
        if (elapsed.compareTo(grace) <= 0) {
            return 0;
        }
        double seconds = elapsed.minus(grace).toNanos() / (double) NANOS_PER_SECOND;
        return Math.min(claimed, (long) (bytesPerSecond(claimed) * seconds));
    }

    /** Whether a body that has brought {@code received} of {@code claimed} bytes {@code elapsed} in is too slow. */
    boolean behind(long claimed, long received, Duration elapsed) {
        return received < required(claimed, elapsed);
    }

    /** The 408's message for a body cut for being {@link #behind}. */
    String message(long claimed, long received, Duration elapsed) {
        return "the request body arrived too slowly: " + received + " of " + claimed + " bytes in " + elapsed.toMillis()
                + "ms; after its first " + grace.toMillis() + "ms a body must arrive at " + bytesPerSecond(claimed)
                + " bytes/s or faster (at least " + minBytesPerSecond + ", and enough to arrive whole within "
                + requestTimeout.toMillis() + "ms)";
    }
}
