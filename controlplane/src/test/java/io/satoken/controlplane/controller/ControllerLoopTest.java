package io.satoken.controlplane.controller;

import static org.assertj.core.api.Assertions.assertThat;

import io.kubernetes.client.extended.workqueue.ratelimiter.RateLimiter;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** The loop's retry rules (TC-2): RETRY requeues with backoff, a cap drops the key, DONE forgets failures. */
class ControllerLoopTest {

    /** No delay, but counts requeues per key as the real limiter does. */
    static final class CountingLimiter implements RateLimiter<String> {
        final Map<String, Integer> requeues = new HashMap<>();

        @Override
        public Duration when(String item) {
            requeues.merge(item, 1, Integer::sum);
            return Duration.ZERO;
        }

        @Override
        public void forget(String item) {
            requeues.remove(item);
        }

        @Override
        public int numRequeues(String item) {
            return requeues.getOrDefault(item, 0);
        }
    }

    private final SimpleMeterRegistry registry = new SimpleMeterRegistry();
    private final CountingLimiter limiter = new CountingLimiter();
    private final List<String> calls = new ArrayList<>();
    private ControllerLoop<String> loop;

    @AfterEach
    void close() {
        if (loop != null) {
            loop.close();
        }
    }

    @Test
    void retry_isCappedAtMaxRetries_thenTheKeyIsDropped() throws Exception {
        loop = new ControllerLoop<>("t", key -> {
            calls.add(key);
            return Reconciler.Result.RETRY;
        }, 1, 10, new ControllerMetrics(registry), limiter);
        loop.enqueue("a");

        for (int i = 0; i < 11; i++) {
            loop.processNext();
        }

        assertThat(calls).hasSize(11); // the first try and 10 retries
        assertThat(limiter.numRequeues("a")).isZero();
        assertThat(registry.counter("satoken_controller_dropped_keys_total", "controller", "t").count()).isEqualTo(1);
    }

    @Test
    void done_forgetsEarlierFailures() throws Exception {
        List<Reconciler.Result> answers = new ArrayList<>(List.of(Reconciler.Result.RETRY, Reconciler.Result.RETRY,
                Reconciler.Result.DONE));
        loop = new ControllerLoop<>("t", key -> {
            calls.add(key);
            return answers.remove(0);
        }, 1, 10, new ControllerMetrics(registry), limiter);
        loop.enqueue("a");

        for (int i = 0; i < 3; i++) {
            loop.processNext();
        }

        assertThat(calls).containsExactly("a", "a", "a");
        assertThat(limiter.numRequeues("a")).isZero();
    }

    @Test
    void exception_countsAsRetry_unlimitedWhenNoCap() throws Exception {
        loop = new ControllerLoop<>("t", key -> {
            calls.add(key);
            throw new IllegalStateException("boom");
        }, 1, ControllerLoop.UNLIMITED_RETRIES, new ControllerMetrics(registry), limiter);
        loop.enqueue("a");

        for (int i = 0; i < 20; i++) {
            loop.processNext();
        }

        assertThat(calls).hasSize(20);
        assertThat(limiter.numRequeues("a")).isEqualTo(20);
    }

    @Test
    void duplicateKeys_queuedMeanwhile_collapseIntoOne() throws Exception {
        loop = new ControllerLoop<>("t", key -> {
            calls.add(key);
            return Reconciler.Result.DONE;
        }, 1, 10, new ControllerMetrics(registry), limiter);
        loop.enqueue("a");
        loop.enqueue("a");
        loop.enqueue("b");

        loop.processNext();
        loop.processNext();

        assertThat(calls).containsExactly("a", "b");
        assertThat(registry.get("satoken_controller_queue_depth").gauge().value()).isZero();
    }

    @Test
    void defaultLimiter_isClientGos_perKeyExponentialAndTenPerSecondOverall() {
        RateLimiter<String> limiter = ControllerLoop.upstreamDefault();

        assertThat(limiter.when("a")).isEqualTo(Duration.ofMillis(5));
        assertThat(limiter.when("a")).isEqualTo(Duration.ofMillis(10));
        for (int i = 0; i < 98; i++) {
            limiter.when("k" + i); // the rest of the bucket's burst of 100
        }
        // the 101st token comes within a tenth of a second, not after six seconds (10 per minute)
        assertThat(limiter.when("b")).isLessThanOrEqualTo(Duration.ofMillis(100));
    }
}
