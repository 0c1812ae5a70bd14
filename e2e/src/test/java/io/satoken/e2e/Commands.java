package io.satoken.e2e;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;

/** Runs a short host command (mount, install.sh, systemd-analyze) with its output kept in a suite log. */
final class Commands {

    /** A finished command: its exit status and everything it printed. */
    record Result(int exit, String output) {
    }

    private Commands() {
    }

    /** Runs {@code command}, output to a new log named {@code name}; -1 as the status if it ran past 5 min. */
    static Result run(String name, List<String> command) throws IOException, InterruptedException {
        return run(name, command, Duration.ofMinutes(5));
    }

    /** Runs {@code command}, output to a new log named {@code name}; -1 as the status if it ran past {@code timeout}. */
    static Result run(String name, List<String> command, Duration timeout) throws IOException, InterruptedException {
        Path log = E2E.newLog(name);
        Process p = new ProcessBuilder(command).redirectErrorStream(true)
                .redirectOutput(ProcessBuilder.Redirect.to(log.toFile())).start();
        boolean done = p.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS);
        if (!done) {
            p.destroyForcibly();
        }
        return new Result(done ? p.exitValue() : -1, Files.readString(log, StandardCharsets.UTF_8));
    }

    /** Whether {@code program} is on PATH. */
    static boolean onPath(String program) {
        String path = System.getenv().getOrDefault("PATH", "/usr/bin:/bin");
        for (String dir : path.split(":")) {
            if (Files.isExecutable(Path.of(dir, program))) {
                return true;
            }
        }
        return false;
    }
}
