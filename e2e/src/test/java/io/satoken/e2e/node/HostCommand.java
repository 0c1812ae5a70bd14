package io.satoken.e2e.node;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/**
 * A short host command the harness runs (gcc, ctr, umount, ip), its output kept in memory and put into the
 * error when it fails. Not for anything that could print a token: nothing here is logged.
 */
final class HostCommand {

    /** A finished command: its exit status (-1 when it ran past its timeout) and what it printed. */
    record Result(int exit, String output) {
        boolean ok() {
            return exit == 0;
        }
    }

    private static final Duration TIMEOUT = Duration.ofMinutes(2);

    private HostCommand() {
    }

    /** Runs {@code command} to its end (at most 2 min). */
    static Result run(String... command) throws IOException {
        Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
        p.getOutputStream().close();
        CompletableFuture<String> output = CompletableFuture.supplyAsync(() -> read(p.getInputStream()));
        try {
            if (!p.waitFor(TIMEOUT.toMillis(), TimeUnit.MILLISECONDS)) {
                p.destroyForcibly();
                return new Result(-1, String.join(" ", command) + ": still running after " + TIMEOUT.toSeconds()
                        + " s");
            }
            return new Result(p.exitValue(), output.join());
        } catch (InterruptedException e) {
            p.destroyForcibly();
            Thread.currentThread().interrupt();
            throw new IOException("interrupted while running " + String.join(" ", command), e);
        }
    }

    /** Runs {@code command} and returns its output; fails with that output unless it exits 0. */
    static String check(String... command) throws IOException {
        Result r = run(command);
        if (!r.ok()) {
            throw new IOException(String.join(" ", command) + " exited " + r.exit() + ":\n" + r.output());
        }
        return r.output();
    }

    /** Whether {@code program} is on PATH (or, given as an absolute path, executable). */
    static boolean available(String program) {
        if (program.startsWith("/")) {
            return Files.isExecutable(Path.of(program));
        }
        String path = System.getenv().getOrDefault("PATH", "/usr/sbin:/usr/bin:/sbin:/bin");
        for (String dir : path.split(":")) {
            if (!dir.isEmpty() && Files.isExecutable(Path.of(dir, program))) {
                return true;
            }
        }
        return false;
    }

    private static String read(InputStream in) {
        try (in) {
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        } catch (IOException e) {
            return "(output unreadable: " + e.getMessage() + ")";
        }
    }
}
