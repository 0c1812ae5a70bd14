package io.satoken.e2e.node;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Where the node's processes (containerd, kubelet, kube-apiserver, etcd) leave their logs: the suite's log
 * directory ({@code satoken.e2e.logs}, which failsafe sets to {@code e2e/target/e2e-logs}), so the logs
 * outlive the node's temp directory and the secrets-hygiene check reads them with every other log.
 */
final class NodeLogs {

    private static final AtomicInteger SEQUENCE = new AtomicInteger();
    private static final long RUN = ProcessHandle.current().pid();

    private NodeLogs() {
    }

    /** A fresh log file, e.g. {@code 4242-node-003-kubelet.log}; restarts never overwrite an earlier log. */
    static Path newLog(String name) {
        try {
            Path dir = Files.createDirectories(
                    Path.of(System.getProperty("satoken.e2e.logs", "target/e2e-logs")).toAbsolutePath());
            return dir.resolve(String.format("%d-node-%03d-%s.log", RUN, SEQUENCE.incrementAndGet(), name));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
