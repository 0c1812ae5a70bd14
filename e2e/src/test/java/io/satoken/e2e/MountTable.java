package io.satoken.e2e;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * The mounts under a test's directory, read from {@code /proc/self/mountinfo}: the CSI tests check that the
 * agent mounted (and unmounted) a tmpfs at a volume's target path, and take away at teardown every mount a
 * stopped or killed agent left, so that the temporary directory can be deleted and nothing stays on the host.
 */
final class MountTable {

    private static final Path MOUNTINFO = Path.of("/proc/self/mountinfo");

    private MountTable() {
    }

    /** One mount: where, its filesystem type and its source (the agent's tmpfs mounts are {@code tokens.satoken.io}). */
    record Mount(Path point, String type, String source) {}

    /** The mounts at or under {@code dir}, deepest first (a point mounted twice appears twice). */
    static List<Mount> under(Path dir) throws IOException {
        List<Mount> mounts = new ArrayList<>();
        for (String line : Files.readAllLines(MOUNTINFO, StandardCharsets.UTF_8)) {
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
    static Mount at(Path point) throws IOException {
        return under(point).stream().filter(m -> m.point().equals(point)).findFirst().orElse(null);
    }

    /**
     * Unmounts everything at or under {@code dir}, deepest first, lazily when a plain unmount is refused;
     * returns how many mounts there were. Never throws: it runs at teardown, where one stuck mount must not
     * stop the rest; what is still mounted afterwards is printed.
     */
    static int unmountAll(Path dir) {
        int found = 0;
        try {
            for (int pass = 0; pass < 3; pass++) { // stacked mounts show one at a time
                List<Mount> mounts = under(dir);
                if (mounts.isEmpty()) {
                    return found;
                }
                found += mounts.size();
                for (Mount m : mounts) {
                    if (run("umount", m.point().toString()) != 0) {
                        run("umount", "-l", m.point().toString());
                    }
                }
            }
            List<Mount> left = under(dir);
            if (!left.isEmpty()) {
                System.err.println("*** e2e: still mounted under " + dir + " after unmounting: " + left + " ***");
            }
        } catch (IOException e) {
            System.err.println("*** e2e: could not unmount under " + dir + ": " + e + " ***");
        }
        return found;
    }

    /**
     * Null when this process can mount a tmpfs (root, or CAP_SYS_ADMIN in the host's mount namespace), as the
     * agent's CSI publish does; else why not. Found by mounting one in a temporary directory.
     */
    static String cannotMountReason() {
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
