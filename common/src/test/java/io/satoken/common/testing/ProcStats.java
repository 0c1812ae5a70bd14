package io.satoken.common.testing;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.TreeMap;
import java.util.stream.Stream;

/** What the load drivers read about a process from Linux's /proc: CPU time and memory. */
public final class ProcStats {

    /** Clock ticks per second ({@code getconf CLK_TCK}): 100 on Linux x86-64. */
    public static final long CLK_TCK = 100;

    private ProcStats() {
    }

    /** User plus system CPU seconds of the process so far. */
    public static double cpuSeconds(long pid) throws IOException {
        return cpuSeconds(Files.readString(Path.of("/proc/" + pid + "/stat")));
    }

    /** CPU seconds of the process's threads, summed by thread name with digits as {@code #} ("C# CompilerThre"). */
    public static Map<String, Double> threadCpuSeconds(long pid) throws IOException {
        Map<String, Double> byName = new TreeMap<>();
        try (Stream<Path> tasks = Files.list(Path.of("/proc/" + pid + "/task"))) {
            for (Path task : tasks.toList()) {
                try {
                    String name = Files.readString(task.resolve("comm")).strip().replaceAll("[0-9]+", "#");
                    byName.merge(name, cpuSeconds(Files.readString(task.resolve("stat"))), Double::sum);
                } catch (IOException gone) {
                    // the thread ended meanwhile
                }
            }
        }
        return byName;
    }

    /**
     * A "kB" field of /proc/pid/status, e.g. VmRSS, in KiB.
     *
     * @throws IllegalStateException when the field is not there
     */
    public static long statusKiB(long pid, String field) throws IOException {
        for (String line : Files.readAllLines(Path.of("/proc/" + pid + "/status"))) {
            if (line.startsWith(field + ":")) {
                return Long.parseLong(line.substring(field.length() + 1).replace("kB", "").strip());
            }
        }
        throw new IllegalStateException(field + " not in /proc/" + pid + "/status");
    }

    /** utime + stime of a stat line; the fields after "(comm)" start at field 3, utime is 14 and stime 15. */
    private static double cpuSeconds(String stat) {
        String[] f = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
        return (Long.parseLong(f[11]) + Long.parseLong(f[12])) / (double) CLK_TCK;
    }
}
