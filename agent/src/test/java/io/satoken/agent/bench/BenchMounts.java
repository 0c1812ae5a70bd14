package io.satoken.agent.bench;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.FileStore;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * The mounts under the load driver's temporary directory, from {@code /proc/self/mountinfo}: the agent
 * leaves its tmpfs mounts in place when it stops (a restarted agent adopts them), so the driver takes them
 * away itself, always, before it removes the directory; token files never outlive the run.
 */
final class BenchMounts {

    private static final Path MOUNTINFO = Path.of("/proc/self/mountinfo");

    private BenchMounts() {
    }

    /** Mount points at or under {@code dir}, deepest first (a point mounted twice appears twice). */
    static List<Path> under(Path dir) throws IOException {
        List<Path> points = new ArrayList<>();
        for (String line : Files.readAllLines(MOUNTINFO, StandardCharsets.UTF_8)) {
            // id parent major:minor root mount-point options [optional...] - fstype source super-options
            String[] fields = line.split(" ");
            if (fields.length > 4) {
                Path point = Path.of(unescape(fields[4]));
                if (point.startsWith(dir)) {
                    points.add(point);
                }
            }
        }
        points.sort(Comparator.comparingInt(Path::getNameCount).reversed());
        return points;
    }

    /** Bytes in use on the file systems mounted at {@code points} (statfs: total minus free), summed. */
    static long usedBytes(List<Path> points) throws IOException {
        long used = 0;
        for (Path point : points) {
            FileStore store = Files.getFileStore(point);
            used += store.getTotalSpace() - store.getUnallocatedSpace();
        }
        return used;
    }

    /**
     * Unmounts everything at or under {@code dir}, deepest first, lazily when a plain unmount is refused.
     * Never throws: it runs in a finally block and a shutdown hook.
     *
     * @return how many mounts were found, and how many are left (printed when not 0)
     */
    static int[] unmountAll(Path dir) {
        int found = 0;
        try {
            for (int pass = 0; pass < 3; pass++) { // stacked mounts show one at a time
                List<Path> points = under(dir);
                if (points.isEmpty()) {
                    return new int[] {found, 0};
                }
                found += points.size();
                for (Path point : points) {
                    if (run("umount", point.toString()) != 0) {
                        run("umount", "-l", point.toString());
                    }
                }
            }
            List<Path> left = under(dir);
            if (!left.isEmpty()) {
                System.err.println("[bench] still mounted under " + dir + " after unmounting: " + left.size()
                        + " mount(s), e.g. " + left.get(0));
            }
            return new int[] {found, left.size()};
        } catch (IOException e) {
            System.err.println("[bench] could not unmount under " + dir + ": " + e);
            return new int[] {found, -1};
        }
    }

    private static int run(String... command) throws IOException {
        Process p = new ProcessBuilder(command).redirectErrorStream(true)
                .redirectOutput(ProcessBuilder.Redirect.DISCARD).start();
        try {
            if (!p.waitFor(30, TimeUnit.SECONDS)) {
                p.destroyForcibly();
                return -1;
            }
            return p.exitValue();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            p.destroyForcibly();
            return -1;
        }
    }

    /** mountinfo writes space, tab, newline and backslash as {@code \ooo}. */
    private static String unescape(String field) {
        StringBuilder out = new StringBuilder(field.length());
        for (int i = 0; i < field.length(); i++) {
            char c = field.charAt(i);
            if (c == '\\' && i + 4 <= field.length() && field.substring(i + 1, i + 4).matches("[0-7]{3}")) {
                out.append((char) Integer.parseInt(field.substring(i + 1, i + 4), 8));
                i += 3;
            } else {
                out.append(c);
            }
        }
        return out.toString();
    }
}
