package io.satoken.common.testing;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import java.util.stream.Collectors;
import java.util.stream.Stream;

/**
 * What the load drivers read from Linux's /proc: a process's CPU time, memory and threads, which process runs
 * a command, and the machine's CPU time, load and model.
 */
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

    /**
     * The threads that used at least one clock tick between two {@link #threadCpuSeconds} readings, most first,
     * at most {@code most} of them: "name seconds, ..." ({@code "%s %.2f"}); empty when none did.
     */
    public static String busiestThreads(Map<String, Double> before, Map<String, Double> after, int most) {
        return after.entrySet().stream()
                .map(e -> Map.entry(e.getKey(), e.getValue() - before.getOrDefault(e.getKey(), 0.0)))
                .filter(e -> e.getValue() > 0.5 / CLK_TCK) // a tick's sum of doubles may fall just short of 0.01
                .sorted(Map.Entry.<String, Double>comparingByValue().reversed())
                .limit(most)
                .map(e -> String.format(Locale.ROOT, "%s %.2f", e.getKey(), e.getValue()))
                .collect(Collectors.joining(", "));
    }

    /** The {@code Threads} line of /proc/pid/status (a count, not a kB field). */
    public static long threads(long pid) throws IOException {
        return Files.readAllLines(Path.of("/proc/" + pid + "/status")).stream().filter(l -> l.startsWith("Threads:"))
                .map(l -> Long.parseLong(l.substring(8).strip())).findFirst().orElseThrow();
    }

    /**
     * "kB" fields of /proc/pid/status in MiB, e.g. VmRSS's parts: {@code RssAnon} (anonymous memory),
     * {@code RssFile} (mapped files: the jar, the CDS archive, libjvm), {@code RssShmem}; as
     * "RssAnon 12.3 MiB, RssFile 4.5 MiB".
     */
    public static String statusMiB(long pid, String... fields) throws IOException {
        List<String> parts = new ArrayList<>();
        for (String field : fields) {
            parts.add(String.format(Locale.ROOT, "%s %.1f MiB", field, statusKiB(pid, field) / 1024.0));
        }
        return String.join(", ", parts);
    }

    /** The command line of a process, its arguments joined by spaces. */
    public static String cmdline(long pid) throws IOException {
        return Files.readString(Path.of("/proc/" + pid + "/cmdline")).replace('\0', ' ');
    }

    /** The one process whose command line holds the argument {@code arg}, e.g. the API server by its port. */
    public static long pidWith(String arg) throws IOException {
        List<Long> found = new ArrayList<>();
        try (Stream<Path> procs = Files.list(Path.of("/proc"))) {
            for (Path p : procs.toList()) {
                String name = p.getFileName().toString();
                if (name.chars().allMatch(Character::isDigit)) {
                    try {
                        if (Arrays.asList(Files.readString(p.resolve("cmdline")).split("\0")).contains(arg)) {
                            found.add(Long.parseLong(name));
                        }
                    } catch (IOException gone) {
                        // exited meanwhile
                    }
                }
            }
        }
        if (found.size() != 1) {
            throw new IllegalStateException("expected one process with " + arg + ", found " + found);
        }
        return found.get(0);
    }

    /** The machine's total and idle (idle + iowait) jiffies from /proc/stat. */
    public static long[] machineTicks() throws IOException {
        String[] f = Files.readAllLines(Path.of("/proc/stat")).get(0).trim().split("\\s+");
        long total = 0;
        for (int i = 1; i < f.length; i++) {
            total += Long.parseLong(f[i]);
        }
        return new long[] {total, Long.parseLong(f[4]) + Long.parseLong(f[5])};
    }

    /** The machine's load averages (1, 5, 15 min), as /proc/loadavg gives them. */
    public static String loadAverage() throws IOException {
        String[] f = Files.readString(Path.of("/proc/loadavg")).split(" ");
        return f[0] + " " + f[1] + " " + f[2];
    }

    /** The first CPU's model name from /proc/cpuinfo; "?" where it names none. */
    public static String cpuModel() throws IOException {
        return Files.readAllLines(Path.of("/proc/cpuinfo")).stream().filter(l -> l.startsWith("model name"))
                .map(l -> l.substring(l.indexOf(':') + 1).strip()).findFirst().orElse("?");
    }

    /** utime + stime of a stat line; the fields after "(comm)" start at field 3, utime is 14 and stime 15. */
    private static double cpuSeconds(String stat) {
        String[] f = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
        return (Long.parseLong(f[11]) + Long.parseLong(f[12])) / (double) CLK_TCK;
    }
}
