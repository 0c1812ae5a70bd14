package io.satoken.e2e.node;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The mounts a node leaves under its directory (container rootfs overlays, sandbox shm, network-namespace
 * bind mounts, the kubelet's tmpfs volumes), read from {@code /proc/self/mountinfo} and unmounted deepest
 * first, with {@code umount -l} when a plain unmount is refused.
 */
final class Mounts {

    private static final Path MOUNTINFO = Path.of("/proc/self/mountinfo");
    private static final Pattern OCTAL = Pattern.compile("\\\\([0-7]{3})");

    private Mounts() {
    }

    /** The mount points at or under {@code dir}, deepest first (a point mounted twice appears twice). */
    static List<Path> under(Path dir) throws IOException {
        List<Path> points = new ArrayList<>();
        for (String line : Files.readAllLines(MOUNTINFO, StandardCharsets.UTF_8)) {
            // "36 35 98:0 /mnt1 /mnt/point rw,noatime ... - ext3 /dev/root rw": the 5th field is the point
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

    /**
     * Unmounts everything at or under {@code dir}, deepest first; returns what is still mounted (empty when
     * all went). Never throws: it runs in cleanups, where one stuck mount must not stop the rest.
     */
    static List<Path> unmountAll(Path dir) {
        try {
            // a second pass takes mounts stacked on one point and any that a lazy unmount left visible
            for (int pass = 0; pass < 3; pass++) {
                List<Path> points = under(dir);
                if (points.isEmpty()) {
                    return List.of();
                }
                for (Path point : points) {
                    HostCommand.Result r = HostCommand.run("umount", point.toString());
                    if (!r.ok()) {
                        HostCommand.run("umount", "-l", point.toString());
                    }
                }
            }
            return under(dir);
        } catch (IOException e) {
            System.err.println("node: could not unmount under " + dir + ": " + e.getMessage());
            return List.of(dir);
        }
    }

    /** mountinfo writes space, tab, newline and backslash as {@code \040}-style octal escapes. */
    private static String unescape(String field) {
        Matcher m = OCTAL.matcher(field);
        StringBuilder out = new StringBuilder();
        while (m.find()) {
            m.appendReplacement(out, Matcher.quoteReplacement(
                    String.valueOf((char) Integer.parseInt(m.group(1), 8))));
        }
        m.appendTail(out);
        return out.toString();
    }
}
