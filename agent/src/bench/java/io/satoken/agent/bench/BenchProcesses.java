package io.satoken.agent.bench;

import io.satoken.common.testing.ProcStats;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

/** The processes the load driver watches, found and read through Linux's /proc. */
final class BenchProcesses {

    private BenchProcesses() {
    }

    /**
     * utime and stime of a process, all threads, and cutime + cstime of its children that it waited for
     * (the agent's {@code mount} and {@code umount} processes), in clock ticks.
     */
    record Cpu(long user, long system, long children) {
        double seconds() {
            return (user + system) / (double) ProcStats.CLK_TCK;
        }

        double childSeconds() {
            return children / (double) ProcStats.CLK_TCK;
        }
    }

    static Cpu cpu(long pid) throws IOException {
        String stat = Files.readString(Path.of("/proc/" + pid + "/stat"));
        // fields after "(comm)": state is field 3, utime 14, stime 15, cutime 16, cstime 17
        String[] f = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
        return new Cpu(Long.parseLong(f[11]), Long.parseLong(f[12]), Long.parseLong(f[13]) + Long.parseLong(f[14]));
    }

    /** The launcher execs java, so its pid is the JVM's; if some launcher forks instead, its java child. */
    static long javaPid(Process launched) throws IOException, InterruptedException {
        long pid = launched.pid();
        for (int i = 0; i < 100; i++) {
            String cmd;
            try {
                cmd = ProcStats.cmdline(pid);
            } catch (NoSuchFileException gone) {
                launched.waitFor(5, TimeUnit.SECONDS);
                throw new IllegalStateException("the agent exited at once"
                        + (launched.isAlive() ? "" : " with status " + launched.exitValue()));
            }
            if (cmd.startsWith("java") || cmd.contains("/java ")) {
                return pid;
            }
            for (Path task : list(Path.of("/proc/" + pid + "/task"))) {
                for (String child : Files.readString(task.resolve("children")).trim().split("\\s+")) {
                    if (!child.isEmpty() && ProcStats.cmdline(Long.parseLong(child)).contains("java")) {
                        return Long.parseLong(child);
                    }
                }
            }
            Thread.sleep(50);
        }
        throw new IllegalStateException("no java process under pid " + pid + ": " + ProcStats.cmdline(pid));
    }

    /** VmRSS's parts: anonymous memory, mapped files (the jar, the CDS archive, libjvm) and shmem. */
    static String rssSplit(long pid) throws IOException {
        return ProcStats.statusMiB(pid, "RssAnon", "RssFile", "RssShmem");
    }

    /** The machine's load averages (1, 5, 15 min), or "unknown (why)". */
    static String loadAverage() {
        try {
            return ProcStats.loadAverage();
        } catch (IOException e) {
            return "unknown (" + e.getMessage() + ")";
        }
    }

    private static List<Path> list(Path dir) throws IOException {
        try (Stream<Path> s = Files.list(dir)) {
            return s.toList();
        }
    }
}
