package io.satoken.common.testing;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;

/**
 * One child process of a test harness or load driver (etcd, kube-apiserver, containerd, kubelet, a satoken
 * program): its stdout and stderr appended to a log file; awaited with a probe; stopped by its own pid,
 * never by name, since other such processes may run on the machine. The one process wrapper of the tests:
 * the API server harness, e2e's SatokenProcess and node processes, and the bench drivers use it.
 */
public final class ManagedProcess {

    /** A readiness check; an exception means "not yet", except IllegalStateException: "never". */
    public interface Probe {
        boolean ready() throws Exception;
    }

    private static final Duration POLL = Duration.ofMillis(100);
    private static final Duration STOP_GRACE = Duration.ofSeconds(10);
    private static final int TAIL_LINES = 40;
    /** Processes still running when the test JVM exits (a test that failed half-way) are killed with it. */
    private static final Set<Process> LIVE = ConcurrentHashMap.newKeySet();

    static {
        Runtime.getRuntime().addShutdownHook(new Thread(() -> LIVE.forEach(Process::destroyForcibly),
                "managed-processes"));
    }

    private final String name;
    private final Process process;
    private final Path log;

    private ManagedProcess(String name, Process process, Path log) {
        this.name = name;
        this.process = process;
        this.log = log;
    }

    /** Starts {@code command}, appending its stdout and stderr to {@code log}. */
    public static ManagedProcess start(String name, List<String> command, Path log) throws IOException {
        return start(name, new ProcessBuilder(command), log);
    }

    /** Starts {@code builder} (its command and environment set), appending its stdout and stderr to {@code log}. */
    public static ManagedProcess start(String name, ProcessBuilder builder, Path log) throws IOException {
        Process p = builder
                .redirectErrorStream(true)
                .redirectOutput(ProcessBuilder.Redirect.appendTo(log.toFile()))
                .start();
        return new ManagedProcess(name, p, log);
    }

    /** A process started elsewhere, its output in {@code log} (or null when there is none), to await and stop. */
    public static ManagedProcess of(String name, Process process, Path log) {
        return new ManagedProcess(name, process, log);
    }

    /** Kills this process too if it still runs when the test JVM exits. */
    public ManagedProcess killedOnExit() {
        LIVE.add(process);
        process.onExit().thenRun(() -> LIVE.remove(process));
        return this;
    }

    public String name() {
        return name;
    }

    public long pid() {
        return process.pid();
    }

    public Path log() {
        return log;
    }

    public boolean isAlive() {
        return process.isAlive();
    }

    /** The exit status; -1 while it still runs. */
    public int exitValue() {
        return process.isAlive() ? -1 : process.exitValue();
    }

    /** Polls {@code probe} until it passes; fails, with the log's tail, when the process exits or {@code timeout} passes. */
    public void awaitReady(Probe probe, Duration timeout) throws IOException {
        awaitReady("readiness", probe, timeout);
    }

    /**
     * Polls {@code probe} every 100 ms until it passes; fails, with the log's tail, when the process exits or
     * {@code timeout} passes ({@code what}: what the probe waits for, for the message).
     */
    public void awaitReady(String what, Probe probe, Duration timeout) throws IOException {
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

    /** SIGTERM, then SIGKILL if it has not exited within 10 s. */
    public void terminate() {
        stop(STOP_GRACE);
    }

    /** SIGTERM to the pid, then SIGKILL after {@code grace}; waits for the exit and returns its status (-1: still running). */
    public int stop(Duration grace) {
        if (process.isAlive()) {
            process.destroy();
            if (!waitFor(grace)) {
                System.err.println(name + " (pid " + pid() + ") ignored SIGTERM for " + grace.toSeconds()
                        + " s; killing it");
                kill();
            }
        }
        return exitValue();
    }

    /** SIGKILL, and wait for the exit. */
    public void kill() {
        process.destroyForcibly();
        waitFor(STOP_GRACE);
    }

    /** Waits up to {@code d} for the exit; true when it has exited. */
    public boolean waitFor(Duration d) {
        try {
            return process.waitFor(d.toMillis(), TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        }
    }

    /** The last 40 lines of the log, headed by its path. */
    public String tail() {
        return log == null ? "" : logTail(log, TAIL_LINES);
    }

    /** The last {@code lines} lines of a log, headed by its path; empty when there is no log. */
    public static String logTail(Path log, int lines) {
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

    /** The one sleep of the harnesses: between polls of a real process, always under a deadline. */
    public static void sleep(Duration d) {
        try {
            Thread.sleep(d.toMillis());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while waiting", e);
        }
    }
}
