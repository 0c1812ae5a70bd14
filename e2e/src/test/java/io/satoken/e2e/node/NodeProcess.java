package io.satoken.e2e.node;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * One long-running process of the node (containerd, kubelet): stdout and stderr appended to a log kept
 * under the suite's log directory; awaited with a probe; stopped by its own pid, never by name, since other
 * containerds or kubelets may run on the machine.
 */
final class NodeProcess {

    /** A readiness check; an exception means "not yet", except IllegalStateException: "never". */
    interface Probe {
        boolean ready() throws Exception;
    }

    private static final Duration POLL = Duration.ofMillis(100);
    private static final int TAIL_LINES = 40;

    private final String name;
    private final Process process;
    private final Path log;

    private NodeProcess(String name, Process process, Path log) {
        this.name = name;
        this.process = process;
        this.log = log;
    }

    /** Starts {@code command} with its output in a new suite log named {@code name}. */
    static NodeProcess start(String name, List<String> command) throws IOException {
        Path log = NodeLogs.newLog(name);
        Files.writeString(log, "# " + String.join(" ", command) + "\n");
        Process p = new ProcessBuilder(command)
                .redirectErrorStream(true)
                .redirectOutput(ProcessBuilder.Redirect.appendTo(log.toFile()))
                .start();
        return new NodeProcess(name, p, log);
    }

    long pid() {
        return process.pid();
    }

    Path log() {
        return log;
    }

    boolean isAlive() {
        return process.isAlive();
    }

    /**
     * Polls {@code probe} every 100 ms until it passes; fails, with the log's tail, when the process exits or
     * {@code timeout} passes.
     */
    void awaitReady(String what, Probe probe, Duration timeout) throws IOException {
        long deadline = System.nanoTime() + timeout.toNanos();
        Exception last = null;
        while (true) {
            if (!process.isAlive()) {
                throw new IOException(name + " exited with status " + process.exitValue() + " before " + what
                        + "\n" + tail());
            }
            try {
                if (probe.ready()) {
                    return;
                }
            } catch (IllegalStateException fatal) {
                throw new IOException(name + ": " + fatal.getMessage() + "\n" + tail(), fatal);
            } catch (Exception notYet) {
                last = notYet;
            }
            if (System.nanoTime() > deadline) {
                throw new IOException(name + ": no " + what + " after " + timeout.toSeconds() + " s"
                        + (last == null ? "" : " (last check: " + last + ")") + "\n" + tail());
            }
            sleep(POLL);
        }
    }

    /** SIGTERM to the pid, then SIGKILL after {@code grace}; waits for the exit. */
    void stop(Duration grace) {
        if (!process.isAlive()) {
            return;
        }
        process.destroy();
        if (!waitFor(grace)) {
            System.err.println("node: " + name + " (pid " + pid() + ") ignored SIGTERM for "
                    + grace.toSeconds() + " s; killing it");
            process.destroyForcibly();
            waitFor(Duration.ofSeconds(10));
        }
    }

    /** The last lines of the log, headed by its path. */
    String tail() {
        return tail(log, TAIL_LINES);
    }

    static String tail(Path log, int lines) {
        try {
            List<String> all = Files.readAllLines(log, StandardCharsets.UTF_8);
            List<String> tail = all.subList(Math.max(0, all.size() - lines), all.size());
            return "--- last " + tail.size() + " lines of " + log + " ---\n" + String.join("\n", tail) + "\n";
        } catch (IOException | UncheckedIOException e) {
            return "--- " + log + " unreadable: " + e.getMessage() + "\n";
        }
    }

    private boolean waitFor(Duration d) {
        try {
            return process.waitFor(d.toMillis(), TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        }
    }

    /** The one sleep of the harness: between polls of a real process, always under a deadline. */
    static void sleep(Duration d) {
        try {
            Thread.sleep(d.toMillis());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while waiting", e);
        }
    }
}
