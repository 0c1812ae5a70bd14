package io.satoken.agent.reload;

import com.sun.jna.LastErrorException;
import java.io.IOException;
import java.util.OptionalLong;

/**
 * Signals a container's main process through a pidfd:
 * <ol>
 *   <li>find the process by its cgroup ({@link ContainerProcesses});</li>
 *   <li>open a pidfd for it, which from then on names that process and no other;</li>
 *   <li>check its cgroup again: the number may have been taken by another process between 1 and 2;</li>
 *   <li>send the signal through the pidfd: it reaches the process checked in 3, or fails if that one is gone.</li>
 * </ol>
 */
public final class PidfdSignaller implements ContainerSignaller {

    private final ContainerProcesses processes;

    public PidfdSignaller(ContainerProcesses processes) {
        this.processes = processes;
    }

    @Override
    public Outcome signal(String podUid, String containerId, ReloadSignal signal) {
        OptionalLong pid;
        try {
            pid = processes.mainProcess(podUid, containerId);                                       // 1
        } catch (IOException e) {
            return Outcome.failed("cannot list the node's processes: " + e.getMessage());
        }
        if (pid.isEmpty()) {
            return Outcome.failed("no process of the container is visible to the agent (in a pod, the agent needs "
                    + "hostPID: true, the reload-signals Component)");
        }
        int fd;
        try {
            fd = Pidfd.pidfd_open((int) pid.getAsLong(), 0);                                        // 2
        } catch (LastErrorException e) {
            return Outcome.failed("pidfd_open(" + pid.getAsLong() + "): " + Pidfd.strerror(e.getErrorCode()));
        } catch (LinkageError e) {
            return Outcome.failed("pidfd_open is not available (" + e.getMessage() + ")");
        }
        try {
            if (!processes.inContainer(pid.getAsLong(), podUid, containerId)) {                     // 3
                return Outcome.failed("the container's process " + pid.getAsLong() + " exited before the signal");
            }
            Pidfd.pidfd_send_signal(fd, signal.number(), null, 0);                                  // 4
            return Outcome.delivered(pid.getAsLong());
        } catch (LastErrorException e) {
            return Outcome.failed(e.getErrorCode() == Pidfd.ESRCH
                    ? "the container's process " + pid.getAsLong() + " exited before the signal"
                    : "pidfd_send_signal: " + Pidfd.strerror(e.getErrorCode()));
        } finally {
            Pidfd.close(fd);
        }
    }
}
