package io.satoken.agent.csi;

import io.satoken.common.projection.CsiVolumeAttributes;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * Mounts with the system's {@code mount} and {@code umount} (the agent needs CAP_SYS_ADMIN in the host's
 * mount namespace, or Bidirectional propagation in a pod) and reads {@code /proc/self/mountinfo}.
 *
 * <p>Each volume gets its own small tmpfs, as kubelet gives a projected volume, so a token never reaches
 * the node's disk: {@value #OPTIONS}. The root starts 0700, the agent's alone; the first write gives it the
 * group and mode of its files' readers ({@link io.satoken.agent.write.DirectoryAccess}: 0711 root:root, or
 * 0750/0751 and the pod's fsGroup when it has one), and the files carry the modes and owners of the
 * projected-token rules.
 */
public final class TmpfsMounter implements Mounter {

    /** The mount source, the driver's name; it marks this agent's mounts in mountinfo. */
    static final String SOURCE = CsiVolumeAttributes.DRIVER;
    static final String OPTIONS = "size=1m,mode=0700,nosuid,nodev,noexec";
    private static final Path MOUNTINFO = Path.of("/proc/self/mountinfo");
    private static final long TIMEOUT_SECONDS = 30;

    @Override
    public void mountTmpfs(Path target) throws IOException {
        run(List.of("mount", "-t", "tmpfs", "-o", OPTIONS, SOURCE, target.toString()));
    }

    @Override
    public void unmount(Path target) throws IOException {
        if (isMounted(target)) {
            run(List.of("umount", target.toString()));
        }
    }

    @Override
    public boolean isMounted(Path target) throws IOException {
        return mountPoints(Files.readAllLines(MOUNTINFO, StandardCharsets.UTF_8)).contains(target.toString());
    }

    /** The mount points of this agent's tmpfs mounts, unescaped, from mountinfo's lines. */
    static List<String> mountPoints(List<String> mountinfo) {
        List<String> points = new ArrayList<>();
        for (String line : mountinfo) {
            // id parent major:minor root mount-point options [optional...] - fstype source super-options
            String[] fields = line.split(" ");
            int dash = List.of(fields).indexOf("-");
            // the six fields up to the options come before the separator, fstype and source after it
            if (dash < 6 || dash + 2 >= fields.length) {
                continue;
            }
            if ("tmpfs".equals(fields[dash + 1]) && SOURCE.equals(fields[dash + 2])) {
                points.add(unescape(fields[4]));
            }
        }
        return points;
    }

    /** mountinfo writes space, tab, newline and backslash as {@code \ooo}. */
    static String unescape(String field) {
        StringBuilder out = new StringBuilder(field.length());
        for (int i = 0; i < field.length(); i++) {
            char c = field.charAt(i);
            if (c == '\\' && isOctal(field, i + 1)) {
                out.append((char) Integer.parseInt(field.substring(i + 1, i + 4), 8));
                i += 3;
            } else {
                out.append(c);
            }
        }
        return out.toString();
    }

    private static boolean isOctal(String s, int from) {
        if (from + 3 > s.length()) {
            return false;
        }
        for (int i = from; i < from + 3; i++) {
            if (s.charAt(i) < '0' || s.charAt(i) > '7') {
                return false;
            }
        }
        return true;
    }

    private static void run(List<String> command) throws IOException {
        Process process = new ProcessBuilder(command).redirectErrorStream(true).start();
        try {
            if (!process.waitFor(TIMEOUT_SECONDS, TimeUnit.SECONDS)) {
                process.destroyForcibly();
                throw new IOException(String.join(" ", command) + ": no answer in " + TIMEOUT_SECONDS + " s");
            }
        } catch (InterruptedException e) {
            process.destroyForcibly();
            Thread.currentThread().interrupt();
            throw new IOException(String.join(" ", command) + ": interrupted", e);
        }
        String output = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8).strip();
        if (process.exitValue() != 0) {
            throw new IOException(String.join(" ", command) + " failed (exit " + process.exitValue() + ")"
                    + (output.isEmpty() ? "" : ": " + output));
        }
    }
}
