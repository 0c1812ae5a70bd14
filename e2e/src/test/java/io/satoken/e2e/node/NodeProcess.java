package io.satoken.e2e.node;

import io.satoken.common.testing.ManagedProcess;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;

/**
 * One long-running process of the node (containerd, kubelet): stdout and stderr appended to a log kept
 * under the suite's log directory; awaited with a probe; stopped by its own pid, never by name, since other
 * containerds or kubelets may run on the machine.
 */
final class NodeProcess {

    private final ManagedProcess process;

    private NodeProcess(ManagedProcess process) {
        this.process = process;
    }

    /** Starts {@code command} with its output in a new suite log named {@code name}. */
    static NodeProcess start(String name, List<String> command) throws IOException {
        Path log = NodeLogs.newLog(name);
        Files.writeString(log, "# " + String.join(" ", command) + "\n");
        return new NodeProcess(ManagedProcess.start(name, command, log));
    }

    long pid() {
        return process.pid();
    }

    Path log() {
        return process.log();
    }

    boolean isAlive() {
        return process.isAlive();
    }

    /**
     * Polls {@code probe} every 100 ms until it passes; fails, with the log's tail, when the process exits or
     * {@code timeout} passes.
     */
    void awaitReady(String what, ManagedProcess.Probe probe, Duration timeout) throws IOException {
        process.awaitReady(what, probe, timeout);
    }

    /** SIGTERM to the pid, then SIGKILL after {@code grace}; waits for the exit. */
    void stop(Duration grace) {
        process.stop(grace);
    }

    /** The last lines of the log, headed by its path. */
    String tail() {
        return process.tail();
    }

    static String tail(Path log, int lines) {
        return ManagedProcess.logTail(log, lines);
    }

    /** The one sleep of the harness: between polls of a real process, always under a deadline. */
    static void sleep(Duration d) {
        ManagedProcess.sleep(d);
    }
}
