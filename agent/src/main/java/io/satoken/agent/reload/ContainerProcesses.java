package io.satoken.agent.reload;

import java.io.IOException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import java.util.OptionalLong;
import java.util.regex.Pattern;

/**
 * Finds a container's main process among the node's processes, by the cgroup every CRI runtime puts it in: the
 * kubelet names a pod's cgroup after its uid ({@code pod<uid>}, or {@code pod<uid with _>} under systemd) and the
 * runtime names the container's after its id ({@code <id>}, {@code cri-containerd-<id>.scope},
 * {@code crio-<id>.scope}, {@code docker-<id>.scope}). Both must appear in {@code /proc/<pid>/cgroup}, so a process
 * of another pod never matches, whatever its container is called.
 *
 * <p>The main process is the container's first: the earliest started of its processes (a process that {@code
 * kubectl exec} starts joins the container's cgroup later). It sees only the processes of the PID namespace it
 * reads {@code /proc} in: in a pod, the node's only with {@code hostPID: true}.
 */
public final class ContainerProcesses {

    /** A pod's cgroup, under either driver: a uid with dashes or underscores after {@code pod}. */
    private static final Pattern POD_LIKE = Pattern.compile(
            ".*pod\\p{XDigit}{8}[-_]\\p{XDigit}{4}[-_]\\p{XDigit}{4}[-_]\\p{XDigit}{4}[-_]\\p{XDigit}{12}(\\.slice)?");
    /** A container's cgroup: its 64-hex-digit id, bare or inside a runtime's scope name. */
    private static final Pattern CONTAINER_LIKE = Pattern.compile(".*\\p{XDigit}{64}.*");

    private final Path proc;

    /** @param proc the {@code /proc} to read; tests give a tree of their own */
    public ContainerProcesses(Path proc) {
        this.proc = proc;
    }

    /** The container's main process, if one of the processes seen is in its cgroup. */
    public OptionalLong mainProcess(String podUid, String containerId) throws IOException {
        long best = -1;
        long bestStart = Long.MAX_VALUE;
        try (DirectoryStream<Path> entries = Files.newDirectoryStream(proc)) {
            for (Path entry : entries) {
                String name = entry.getFileName().toString();
                if (!name.chars().allMatch(Character::isDigit) || name.isEmpty()) {
                    continue;
                }
                long pid = Long.parseLong(name);
                if (!inContainer(pid, podUid, containerId)) {
                    continue;
                }
                long start = startTime(pid);
                if (start < bestStart || (start == bestStart && pid < best)) {
                    best = pid;
                    bestStart = start;
                }
            }
        }
        return best < 0 ? OptionalLong.empty() : OptionalLong.of(best);
    }

    /** Whether {@code pid}'s cgroup is the container's; false when the process is gone. */
    public boolean inContainer(long pid, String podUid, String containerId) {
        List<String> lines;
        try {
            lines = Files.readAllLines(proc.resolve(Long.toString(pid)).resolve("cgroup"));
        } catch (IOException e) {
            return false; // gone, or not ours to read
        }
        for (String line : lines) {
            int colon = line.indexOf(':', line.indexOf(':') + 1);
            if (colon >= 0 && isContainersCgroup(line.substring(colon + 1), podUid, containerId)) {
                return true;
            }
        }
        return false;
    }

    /**
     * Whether a cgroup path is exactly the container's: the container's cgroup last, the pod's right above it, and
     * above that no cgroup of a pod or a container (the kubelet's {@code kubepods}, its QoS classes, a custom
     * cgroup root, or {@code ..} where the reader's cgroup namespace hides them). A path that merely contains the
     * two names, such as a cgroup another container made below its own and named after them, is not the container's.
     */
    static boolean isContainersCgroup(String path, String podUid, String containerId) {
        List<String> segments = Arrays.stream(path.split("/")).filter(s -> !s.isEmpty()).toList();
        int n = segments.size();
        if (n < 2 || !isContainer(segments.get(n - 1), containerId) || !isPod(segments.get(n - 2), podUid)) {
            return false;
        }
        return segments.subList(0, n - 2).stream()
                .noneMatch(a -> POD_LIKE.matcher(a).matches() || CONTAINER_LIKE.matcher(a).matches());
    }

    private static boolean isContainer(String segment, String containerId) {
        return (segment.equals(containerId) || segment.endsWith("-" + containerId + ".scope")
                || segment.endsWith("-" + containerId)) && !segment.contains("conmon");
    }

    /** {@code pod<uid>} (cgroupfs) or {@code kubepods[-<qos>]-pod<uid with _>.slice} (systemd). */
    private static boolean isPod(String segment, String podUid) {
        String underscored = podUid.replace('-', '_');
        return segment.equals("pod" + podUid) || segment.equals("pod" + underscored)
                || (segment.startsWith("kubepods") && segment.endsWith("-pod" + underscored + ".slice"));
    }

    /** Field 22 of {@code /proc/<pid>/stat}, in clock ticks since boot; the largest value when unreadable. */
    private long startTime(long pid) {
        try {
            String stat = Files.readString(proc.resolve(Long.toString(pid)).resolve("stat"));
            String[] after = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
            return Long.parseLong(after[19]); // after[0] is field 3, the state
        } catch (IOException | RuntimeException e) {
            return Long.MAX_VALUE;
        }
    }
}
