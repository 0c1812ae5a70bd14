package io.satoken.controlplane.controller;

import static org.assertj.core.api.Assertions.assertThat;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** A controller made of loops runs its loops' keys once started, and stops every loop when closed. */
class LoopControllerTest {

    static final class TwoLoops extends LoopController {
        final List<String> handled = new CopyOnWriteArrayList<>();
        final CountDownLatch both = new CountDownLatch(2);
        final ControllerLoop<String> first;
        final ControllerLoop<String> second;

        TwoLoops(ControllerMetrics metrics) {
            super("two");
            this.first = addLoop("two-first", this::handle, 1, ControllerLoop.UNLIMITED_RETRIES, metrics);
            this.second = addLoop("two-second", this::handle, 1, ControllerLoop.UNLIMITED_RETRIES, metrics);
        }

        private Reconciler.Result handle(String key) {
            handled.add(key);
            both.countDown();
            return Reconciler.Result.DONE;
        }
    }

    @Test
    void start_runsEveryLoop_closeStopsThem() throws Exception {
        TwoLoops controller = new TwoLoops(new ControllerMetrics(new SimpleMeterRegistry()));
        controller.first.enqueue("a");
        controller.second.enqueue("b");
        assertThat(controller.handled).as("nothing runs before start").isEmpty();

        controller.start();
        assertThat(controller.both.await(10, TimeUnit.SECONDS)).isTrue();
        controller.close();

        assertThat(controller.name()).isEqualTo("two");
        assertThat(controller.handled).containsExactlyInAnyOrder("a", "b");
        assertThat(controller.first.processNext()).as("the first loop's queue is shut down").isFalse();
        assertThat(controller.second.processNext()).as("the second loop's queue is shut down").isFalse();
    }
}
