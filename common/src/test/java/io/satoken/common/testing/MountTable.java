package io.satoken.common.testing;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * The mounts under a test's or a load driver's directory, read from {@code /proc/self/mountinfo}: the CSI tests
 * check that the agent mounted (and unmounted) a tmpfs at a volume's target path, and every user takes away the
 * mounts a stopped or killed agent left (a restarted agent would adopt them), so that the temporary directory
 * can be deleted and no token file outlives the run.
 */
public final class MountTable {

    private static final Path MOUNTINFO = Path.of("/proc/self/mountinfo");

    private MountTable() {
    }

    /** One mount: where, its filesystem type and its source (the agent's tmpfs mounts are {@code tokens.satoken.io}). */
    public record Mount(Path point, String type, String source) {}

    /** What {@link #unmountAll} did: how many mounts it found, over its passes, and what is still mounted. */
    public record Unmounted(int found, List<Mount> left) {}

    /** The mounts at or under {@code dir}, deepest first (a point mounted twice appears twice). */
    public static List<Mount> under(Path dir) throws IOException {
        return under(Files.readAllLines(MOUNTINFO, StandardCharsets.UTF_8), dir);
    }

    /** {@link #under(Path)} of the lines of a mountinfo file. */
    static List<Mount> under(List<String> mountinfo, Path dir) {
        List<Mount> mounts = new ArrayList<>();
        for (String line : mountinfo) {
            // id parent major:minor root mount-point options [optional...] - fstype source super-options
            String[] fields = line.split(" ");
            int dash = List.of(fields).indexOf("-");
            if (dash < 6 || dash + 2 >= fields.length) { // six fields before the separator, type and source after
                continue;
            }
            Path point = Path.of(unescape(fields[4]));
            if (point.startsWith(dir)) {
                mounts.add(new Mount(point, fields[dash + 1], unescape(fields[dash + 2])));
            }
        }
        mounts.sort(Comparator.comparingInt((Mount m) -> m.point().getNameCount()).reversed());
        return mounts;
    }

    /** The mount at exactly {@code point}, or null. */
    public static Mount at(Path point) throws IOException {
        return under(point).stream().filter(m -> m.point().equals(point)).findFirst().orElse(null);
    }

    /** Unmounts everything at or under {@code dir}, deepest first, lazily when a plain unmount is refused. */
    public static Unmounted unmountAll(Path dir) throws IOException {
        int found = 0;
        for (int pass = 0; pass < 3; pass++) { // stacked mounts show one at a time
            List<Mount> mounts = under(dir);
            if (mounts.isEmpty()) {
                return new Unmounted(found, List.of());
            }
            found += mounts.size();
            for (Mount m : mounts) {
                if (run("umount", m.point().toString()) != 0) {
                    run("umount", "-l", m.point().toString());
                }
            }
        }
        return new Unmounted(found, under(dir));
    }

    /**
     * Null when this process can mount a tmpfs (root, or CAP_SYS_ADMIN in the host's mount namespace), as the
     * agent's CSI publish does; else why not. Found by mounting one in a temporary directory.
     */
    public static String cannotMountReason() {
        Path dir = null;
        try {
            dir = Files.createTempDirectory("satoken-e2e-mount-probe-");
            int status = run("mount", "-t", "tmpfs", "-o", "size=4k", "satoken-e2e-probe", dir.toString());
            if (status != 0) {
                return "mount -t tmpfs exited " + status + " (the agent's CSI publish mounts a tmpfs: run as root)";
            }
            run("umount", dir.toString());
            return null;
        } catch (IOException e) {
            return "cannot run mount: " + e.getMessage();
        } finally {
            if (dir != null) {
                try {
                    Files.deleteIfExists(dir);
                } catch (IOException e) {
                    System.err.println("e2e: could not remove " + dir + ": " + e);
                }
            }
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
            if (c == '\\' && i + 3 < field.length() && field.substring(i + 1, i + 4).matches("[0-7]{3}")) {
                out.append((char) Integer.parseInt(field.substring(i + 1, i + 4), 8));
                i += 3;
            } else {
                out.append(c);
            }
        }
        return out.toString();
    }
}
