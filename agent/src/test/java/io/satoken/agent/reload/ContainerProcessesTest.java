package io.satoken.agent.reload;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/** Finding a container's main process in a {@code /proc} tree written by the test, as the runtimes lay cgroups out. */
class ContainerProcessesTest {

    private static final String UID = "0b7e6f0a-1111-2222-3333-444455556666";
    private static final String OTHER_UID = "9d9d9d9d-1111-2222-3333-444455556666";
    private static final String ID = "c0ffee00c0ffee00c0ffee00c0ffee00c0ffee00c0ffee00c0ffee00c0ffee00";
    private static final String OTHER_ID = "beef0000beef0000beef0000beef0000beef0000beef0000beef0000beef0000";

    @TempDir
    Path proc;

    record Layout(String name, String cgroup) {
        @Override
        public String toString() {
            return name;
        }
    }

    static Stream<Layout> layouts() {
        String underscored = UID.replace('-', '_');
        return Stream.of(
                new Layout("containerd, systemd driver, cgroup v2", "0::/kubepods.slice/kubepods-besteffort.slice/"
                        + "kubepods-besteffort-pod" + underscored + ".slice/cri-containerd-" + ID + ".scope"),
                new Layout("CRI-O, systemd driver", "0::/kubepods.slice/kubepods-burstable.slice/"
                        + "kubepods-burstable-pod" + underscored + ".slice/crio-" + ID + ".scope"),
                new Layout("containerd, cgroupfs driver", "0::/kubepods/besteffort/pod" + UID + "/" + ID),
                new Layout("cgroup v1, several hierarchies", "12:pids:/kubepods/pod" + UID + "/" + ID + "\n"
                        + "1:name=systemd:/kubepods/pod" + UID + "/" + ID),
                new Layout("a custom cgroup root", "0::/tenants/node-pool-a/kubepods/burstable/pod" + UID + "/" + ID),
                new Layout("seen from a private cgroup namespace", "0::/../../kubepods-besteffort-pod" + underscored
                        + ".slice/cri-containerd-" + ID + ".scope"));
    }

    @ParameterizedTest
    @MethodSource("layouts")
    void mainProcess_isTheContainersFirst_inEveryRuntimesLayout(Layout layout) throws IOException {
        process(10, layout.cgroup(), 500);      // the container's main process
        process(11, layout.cgroup(), 900);      // a kubectl exec into it, later
        process(7, "0::/system.slice/containerd.service", 100);
        assertThat(new ContainerProcesses(proc).mainProcess(UID, ID)).hasValue(10);
    }

    @Test
    void processesOfAnotherPod_orAnotherContainer_areNeverTheContainers() throws IOException {
        // the same container id under another pod's cgroup (a runtime would never do it; a check that ignores the
        // pod would let a pod name another's container)
        process(20, "0::/kubepods/pod" + OTHER_UID + "/" + ID, 1);
        process(21, "0::/kubepods/pod" + UID + "/" + OTHER_ID, 1);
        process(22, "0::/kubepods/pod" + UID + "/x" + ID, 1);
        // cgroups another container made below its own, named after this pod and container
        process(23, "0::/kubepods/besteffort/pod" + OTHER_UID + "/" + OTHER_ID + "/kubepods/pod" + UID + "/" + ID, 1);
        process(24, "0::/kubepods/pod" + UID + "/" + ID + "/nested", 1);
        // CRI-O's monitor of the container, in a sibling cgroup named after it
        process(25, "0::/kubepods.slice/kubepods-pod" + UID.replace('-', '_') + ".slice/crio-conmon-" + ID + ".scope", 1);
        assertThat(new ContainerProcesses(proc).mainProcess(UID, ID)).isEmpty();
    }

    @Test
    void processGone_isNotInTheContainer() throws IOException {
        assertThat(new ContainerProcesses(proc).inContainer(99, UID, ID)).isFalse();
    }

    /** A process with its cgroup file and a stat line whose start time (field 22) is {@code start}. */
    private void process(long pid, String cgroup, long start) throws IOException {
        Path dir = Files.createDirectories(proc.resolve(Long.toString(pid)));
        Files.writeString(dir.resolve("cgroup"), cgroup + "\n");
        StringBuilder stat = new StringBuilder(pid + " (sh (odd) name) S 1");
        for (int field = 5; field <= 21; field++) {
            stat.append(" 0");
        }
        stat.append(' ').append(start).append(" 0 0\n");
        Files.writeString(dir.resolve("stat"), stat);
    }
}
