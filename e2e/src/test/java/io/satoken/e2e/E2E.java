package io.satoken.e2e;

import io.satoken.common.testing.KubeApiServer;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Where the suite finds the repository and its built launchers, and where it keeps what it produces: every
 * process's log under {@code e2e/target/e2e-logs} (scanned by {@link SecretsHygieneE2E}) and the failure
 * tests' figures under {@code e2e/target/reliability} (copied into RELIABILITY.md).
 */
final class E2E {

    private static final AtomicInteger SEQUENCE = new AtomicInteger();
    /** Tells the logs of one run of the suite from those of earlier runs in the same target dir. */
    private static final long RUN = ProcessHandle.current().pid();

    private E2E() {
    }

    /** The repository root (failsafe passes {@code satoken.repo}; else the parent of the working dir). */
    static Path repo() {
        String prop = System.getProperty("satoken.repo");
        return (prop != null ? Path.of(prop) : Path.of("").toAbsolutePath().getParent()).normalize();
    }

    static Path agentLauncher() {
        return launcher("agent/bin/satoken-agent", "agent/target/satoken-agent.jar");
    }

    static Path controlplaneLauncher() {
        return launcher("controlplane/bin/satoken-controlplane", "controlplane/target/satoken-controlplane.jar");
    }

    private static Path launcher(String script, String jar) {
        Path s = repo().resolve(script);
        if (!Files.isRegularFile(repo().resolve(jar))) {
            throw new IllegalStateException(repo().resolve(jar) + " is missing: the e2e suite runs the built jars;"
                    + " build them with mvn -B -q -DskipTests package (mvn verify does)");
        }
        return s;
    }

    /** Every log the suite produces lives here, so the hygiene check can read them all. */
    static Path logsDir() {
        return directory(System.getProperty("satoken.e2e.logs", "target/e2e-logs"));
    }

    /** The failure tests' measured figures, one file per test. */
    static Path figuresDir() {
        return directory(System.getProperty("satoken.e2e.figures", "target/reliability"));
    }

    /** A fresh log file for {@code name}, numbered so restarts of one process keep every log. */
    static Path newLog(String name) {
        return logsDir().resolve(String.format("%d-%03d-%s.log", RUN, SEQUENCE.incrementAndGet(), name));
    }

    /**
     * Copies the API server's and etcd's logs into {@link #logsDir()} and closes the server (which deletes
     * its temp directory).
     */
    static void closeKeepingLogs(KubeApiServer server, String name) {
        if (server == null) {
            return;
        }
        try {
            if (server.workDir() != null) {
                for (String process : new String[] {"kube-apiserver", "etcd"}) {
                    Path log = server.workDir().resolve(process + ".log");
                    if (Files.exists(log)) {
                        Files.copy(log, newLog(name + "-" + process), StandardCopyOption.REPLACE_EXISTING);
                    }
                }
            }
        } catch (IOException e) {
            System.err.println("e2e: could not keep the API server's logs: " + e);
        } finally {
            server.close();
        }
    }

    static int freePort() {
        try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            return s.getLocalPort();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static Path directory(String dir) {
        try {
            return Files.createDirectories(Path.of(dir).toAbsolutePath());
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
