package io.satoken.e2e.node;

import java.util.Deque;
import java.util.concurrent.ConcurrentLinkedDeque;

/**
 * The undo steps of a start-up, pushed as each part starts and run last-in first-out, so a start that fails
 * half-way undoes exactly what it did. Every step runs even when an earlier one fails; failures are printed,
 * not thrown, since a cleanup must not hide the test's own failure. Safe to run from a shutdown hook while
 * another thread runs it too: each step is taken once.
 */
final class Cleanups {

    /** One undo step. */
    interface Step {
        void run() throws Exception;
    }

    private record Named(String name, Step step) {
    }

    private final Deque<Named> steps = new ConcurrentLinkedDeque<>();

    void push(String name, Step step) {
        steps.addLast(new Named(name, step));
    }

    /** Runs and forgets every step, newest first. */
    void runAll() {
        Named next;
        while ((next = steps.pollLast()) != null) {
            long start = System.nanoTime();
            try {
                next.step().run();
                if (Boolean.getBoolean("satoken.node.trace")) {
                    System.err.printf("node: cleanup \"%s\" took %d ms%n", next.name(),
                            (System.nanoTime() - start) / 1_000_000);
                }
            } catch (Exception | Error e) {
                System.err.println("node: cleanup \"" + next.name() + "\" failed: " + e);
            }
        }
    }
}
