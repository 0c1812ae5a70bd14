package io.satoken.agent.reload;

import java.io.IOException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.OptionalLong;

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
        String podDash = "pod" + podUid;
        String podUnderscore = "pod" + podUid.replace('-', '_');
        for (String line : lines) {
            int colon = line.indexOf(':', line.indexOf(':') + 1);
            if (colon < 0) {
                continue;
            }
            boolean pod = false;
            boolean container = false;
            for (String segment : line.substring(colon + 1).split("/")) {
                pod |= segment.contains(podDash) || segment.contains(podUnderscore);
                container |= segment.equals(containerId) || segment.endsWith("-" + containerId + ".scope")
                        || segment.endsWith("-" + containerId);
            }
            if (pod && container) {
                return true;
            }
        }
        return false;
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
