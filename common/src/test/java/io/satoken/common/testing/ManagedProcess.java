package io.satoken.common.testing;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;

/** One child process of the harness: its output is appended to a log file; it can be awaited and stopped. */
final class ManagedProcess {

    /** A readiness check; an IOException means "not yet" (e.g. not listening). */
    interface Probe {
        boolean ready() throws IOException;
    }

    private static final Duration POLL = Duration.ofMillis(100);
    private static final Duration STOP_GRACE = Duration.ofSeconds(10);

    private final String name;
    private final Process process;

    private ManagedProcess(String name, Process process) {
        this.name = name;
        this.process = process;
    }

    /** Starts {@code command}, appending its stdout and stderr to {@code log}. */
    static ManagedProcess start(String name, List<String> command, Path log) throws IOException {
        Process p = new ProcessBuilder(command)
                .redirectErrorStream(true)
                .redirectOutput(ProcessBuilder.Redirect.appendTo(log.toFile()))
                .start();
        return new ManagedProcess(name, p);
    }

    /** Polls {@code probe} until it passes; fails when the process exits or {@code timeout} passes. */
    void awaitReady(Probe probe, Duration timeout) throws IOException {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (true) {
            if (!process.isAlive()) {
                throw new IOException(name + " exited with status " + process.exitValue() + " during start-up");
            }
            try {
                if (probe.ready()) {
                    return;
                }
            } catch (IOException notYet) {
                // not listening yet
            }
            if (System.nanoTime() > deadline) {
                throw new IOException(name + " not ready after " + timeout.toSeconds() + " s");
            }
            try {
                Thread.sleep(POLL.toMillis());
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IOException("interrupted while waiting for " + name, e);
            }
        }
    }

    /** SIGTERM, then SIGKILL if it has not exited within 10 s. */
    void terminate() {
        process.destroy();
        if (!waitFor(STOP_GRACE)) {
            kill();
        }
    }

    /** SIGKILL, and wait for the exit. */
    void kill() {
        process.destroyForcibly();
        waitFor(STOP_GRACE);
    }

    private boolean waitFor(Duration d) {
        try {
            return process.waitFor(d.toMillis(), TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        }
    }

    /** The last {@code lines} lines of a log, headed by its path; empty when there is no log. */
    static String logTail(Path log, int lines) {
        if (!Files.exists(log)) {
            return "";
        }
        try {
            List<String> all = Files.readAllLines(log, StandardCharsets.UTF_8);
            List<String> tail = all.subList(Math.max(0, all.size() - lines), all.size());
            return "--- last " + tail.size() + " lines of " + log + " ---\n" + String.join("\n", tail) + "\n";
        } catch (IOException | UncheckedIOException e) {
            return "--- " + log + " unreadable: " + e.getMessage() + "\n";
        }
    }
}
