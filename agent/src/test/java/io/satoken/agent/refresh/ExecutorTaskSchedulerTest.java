package io.satoken.agent.refresh;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.time.Clock;
import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * The refresh threads between refreshes: the thread pool's own timing, so real time, kept short. The pool's idle
 * threads end, the last one stays while a refresh is pending, and the pending refresh still runs.
 */
class ExecutorTaskSchedulerTest {

    @Test
    void idleThreadsEnd_butOneStaysForAPendingTask_whichRuns() throws Exception {
        Clock clock = Clock.systemUTC();
        try (ExecutorTaskScheduler scheduler = new ExecutorTaskScheduler(clock, 4, Duration.ofMillis(50))) {
            CountDownLatch burst = new CountDownLatch(4);
            CountDownLatch release = new CountDownLatch(1);
            for (int i = 0; i < 4; i++) {
                scheduler.schedule(clock.instant(), () -> {
                    burst.countDown();
                    awaitQuietly(release);
                });
            }
            assertThat(burst.await(10, TimeUnit.SECONDS)).as("four tasks ran at once").isTrue();
            assertThat(scheduler.threads()).isEqualTo(4);
            CountDownLatch later = new CountDownLatch(1);
            scheduler.schedule(clock.instant().plusMillis(1_500), later::countDown);
            release.countDown();

            await().atMost(Duration.ofSeconds(5)).until(() -> scheduler.threads() == 1);
            assertThat(later.getCount()).as("the pending task has not run yet").isEqualTo(1);
            assertThat(later.await(10, TimeUnit.SECONDS)).as("the pending task ran").isTrue();
        }
    }

    private static void awaitQuietly(CountDownLatch latch) {
        try {
            latch.await(10, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
