package io.satoken.agent.reload;

/** Sends a signal to a container's main process. */
@FunctionalInterface
public interface ContainerSignaller {

    /** What came of one attempt. */
    record Outcome(boolean delivered, long pid, String problem) {
        public static Outcome delivered(long pid) {
            return new Outcome(true, pid, null);
        }

        public static Outcome failed(String problem) {
            return new Outcome(false, -1, problem);
        }
    }

    /**
     * @param podUid the uid of the pod the volume belongs to, as the kubelet gave it
     * @param containerId the runtime's id of the container, from the pod's status (without {@code <runtime>://})
     */
    Outcome signal(String podUid, String containerId, ReloadSignal signal);
}
