package io.satoken.agent.bench;

import io.satoken.agent.token.BoundObjectRef;
import io.satoken.agent.token.CachedToken;
import io.satoken.agent.token.IssuedToken;
import io.satoken.agent.token.RefreshPolicy;
import io.satoken.agent.token.TokenCache;
import io.satoken.agent.token.TokenKey;
import io.satoken.agent.token.TokenSourceException;
import java.time.Duration;
import java.time.InstantSource;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Warmup;

/**
 * The cache's hit path: {@link TokenCache#get} for a key whose token is cached and fresh, with the
 * system clock, among {@code keys} cached tokens (a node with many pods). No token source call happens.
 */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 5, time = 2)
@Fork(1)
@State(Scope.Benchmark)
public class TokenCacheBenchmark {

    @Param({"1", "1000"})
    int keys;

    private TokenCache cache;
    private List<TokenKey> keyList;
    private int next;

    @Setup(Level.Trial)
    public void setUp() throws TokenSourceException {
        InstantSource clock = InstantSource.system();
        cache = new TokenCache(key -> {
            var now = clock.instant();
            return new IssuedToken("x".repeat(900), now, now.plus(Duration.ofHours(1)));
        }, RefreshPolicy.standard(), clock);
        keyList = new ArrayList<>();
        for (int i = 0; i < keys; i++) {
            TokenKey key = new TokenKey("ns-" + i % 50, "sa-" + i, List.of("vault"), 3600,
                    BoundObjectRef.pod("pod-" + i, "00000000-0000-0000-0000-" + String.format("%012d", i)));
            keyList.add(key);
            cache.get(key);
        }
    }

    @Benchmark
    public CachedToken hit() throws TokenSourceException {
        TokenKey key = keyList.get(next);
        next = next + 1 == keys ? 0 : next + 1;
        return cache.get(key);
    }
}
