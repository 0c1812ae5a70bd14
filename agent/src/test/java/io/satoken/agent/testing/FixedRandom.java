package io.satoken.agent.testing;

import java.util.random.RandomGenerator;

/** A random source pinned to one end of every range, so jitter and backoff are exact in tests. */
public final class FixedRandom implements RandomGenerator {

    private final boolean highest;

    private FixedRandom(boolean highest) {
        this.highest = highest;
    }

    /** Always the largest value below the bound. */
    public static RandomGenerator highest() {
        return new FixedRandom(true);
    }

    /** Always zero. */
    public static RandomGenerator lowest() {
        return new FixedRandom(false);
    }

    @Override
    public long nextLong(long bound) {
        return highest ? bound - 1 : 0;
    }

    @Override
    public double nextDouble() {
        return highest ? Math.nextDown(1.0) : 0;
    }

    @Override
    public long nextLong() {
        throw new UnsupportedOperationException("only bounded draws are pinned");
    }
}
