package io.satoken.e2e.node;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Comparator;
import java.util.List;
import java.util.stream.Stream;

/**
 * What a test node writes outside its own directory, and takes back when it closes. Each of these is
 * recorded before the node starts: a directory that did not exist then is removed whole afterwards; one that
 * did (another kubelet's or containerd's) keeps everything but the entries of this node's own pods.
 *
 * <ul>
 *   <li>{@code /var/lib/kubelet}: the device-plugin socket and checkpoint, at a path v1.26 hard-codes;
 *   <li>{@code /var/log/pods/<namespace>_<pod>_<uid>} and the {@code /var/log/containers} links into it;
 *   <li>{@code /run/containerd}: the shims' sockets ({@code s/}), at a path containerd 1.6 hard-codes;
 *   <li>{@code /var/lib/cni}: libcni's result cache (see {@link CniNetwork#remove()} for one that existed);
 *   <li>the {@code kubepods} cgroup of every controller (removed empty, deepest first, with rmdir).
 * </ul>
 */
final class HostLeftovers {

    private static final Path KUBELET_STATE = Path.of("/var/lib/kubelet");
    private static final Path POD_LOGS = Path.of("/var/log/pods");
    private static final Path CONTAINER_LOGS = Path.of("/var/log/containers");
    private static final Path CONTAINERD_RUN = Path.of("/run/containerd");
    private static final Path CNI_STATE = Path.of("/var/lib/cni");
    private static final Path CGROUPS = Path.of("/sys/fs/cgroup");

    private final List<Path> absentBefore;

    private HostLeftovers(List<Path> absentBefore) {
        this.absentBefore = absentBefore;
    }

    /** Notes which of the paths do not exist yet. */
    static HostLeftovers record() throws IOException {
        List<Path> absent = new ArrayList<>();
        for (Path p : List.of(KUBELET_STATE, POD_LOGS, CONTAINER_LOGS, CONTAINERD_RUN, CNI_STATE)) {
            if (!Files.exists(p, LinkOption.NOFOLLOW_LINKS)) {
                absent.add(p);
            }
        }
        for (Path kubepods : kubepodsCgroups()) {
            if (!Files.exists(kubepods)) {
                absent.add(kubepods);
            }
        }
        return new HostLeftovers(absent);
    }

    /**
     * Removes what the node left; {@code podUids} are the node's pods, whose logs are removed even from
     * directories that existed before. Run after the kubelet, containerd and every container have stopped.
     * Never throws.
     */
    void remove(Collection<String> podUids) {
        for (Path p : absentBefore) {
            try {
                if (p.startsWith(CGROUPS)) {
                    removeCgroup(p);
                } else {
                    deleteRecursively(p);
                }
            } catch (IOException e) {
                System.err.println("node: could not remove " + p + ": " + e.getMessage());
            }
        }
        if (!podUids.isEmpty()) {
            try {
                removePodLogs(podUids);
            } catch (IOException e) {
                System.err.println("node: could not remove the pods' logs: " + e.getMessage());
            }
        }
    }

    /** {@code /var/log/pods/<ns>_<pod>_<uid>} and the {@code /var/log/containers} links pointing into one. */
    private static void removePodLogs(Collection<String> podUids) throws IOException {
        for (Path dir : List.of(CONTAINER_LOGS, POD_LOGS)) {
            if (!Files.isDirectory(dir)) {
                continue;
            }
            try (Stream<Path> entries = Files.list(dir)) {
                for (Path entry : entries.toList()) {
                    String named = Files.isSymbolicLink(entry)
                            ? Files.readSymbolicLink(entry).toString()
                            : entry.getFileName().toString();
                    if (podUids.stream().anyMatch(named::contains)) {
                        deleteRecursively(entry);
                    }
                }
            }
        }
    }

    /** A cgroup directory goes with rmdir once it holds no process and no child cgroup: children first. */
    private static void removeCgroup(Path cgroup) throws IOException {
        if (!Files.isDirectory(cgroup)) {
            return;
        }
        List<Path> dirs;
        try (Stream<Path> walk = Files.walk(cgroup)) {
            dirs = walk.filter(Files::isDirectory).sorted(Comparator.comparingInt(Path::getNameCount).reversed())
                    .toList();
        }
        for (Path d : dirs) {
            Files.delete(d);
        }
    }

    private static List<Path> kubepodsCgroups() throws IOException {
        if (!Files.isDirectory(CGROUPS)) {
            return List.of();
        }
        if (Files.exists(CGROUPS.resolve("cgroup.controllers"))) {
            return List.of(CGROUPS.resolve("kubepods")); // cgroup v2: one hierarchy
        }
        try (Stream<Path> controllers = Files.list(CGROUPS)) {
            return controllers.filter(c -> Files.isDirectory(c, LinkOption.NOFOLLOW_LINKS))
                    .map(c -> c.resolve("kubepods")).toList();
        }
    }

    static void deleteRecursively(Path path) throws IOException {
        if (!Files.exists(path, LinkOption.NOFOLLOW_LINKS)) {
            return;
        }
        try (Stream<Path> walk = Files.walk(path)) {
            for (Path p : walk.sorted(Comparator.reverseOrder()).toList()) {
                Files.deleteIfExists(p);
            }
        }
    }
}
