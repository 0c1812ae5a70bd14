package io.satoken.common.cli;

/**
 * Exit 0 after SIGTERM. {@code systemctl stop} and the kubelet stop a process with SIGTERM; the JVM then
 * runs its shutdown hooks and exits 143, which systemd records as a failed unit. A long-running command
 * registers its shutdown as {@link #onSigterm}: the hook closes the command and ends the JVM with 0. Any
 * other way out (a failed start, a lost Lease) must {@link #cancel} the hook first, or its status would
 * be turned into 0 too.
 */
public final class CleanExit {

    private CleanExit() {
    }

    /** Registers a shutdown hook that runs {@code close} and then ends the JVM with status 0. */
    public static Thread onSigterm(Runnable close) {
        Thread hook = new Thread(() -> {
            close.run();
            Runtime.getRuntime().halt(0);
        }, "satoken-shutdown");
        Runtime.getRuntime().addShutdownHook(hook);
        return hook;
    }

    /**
     * Removes the hook, so the command's own status stands. Returns false when shutdown has already begun
     * (a SIGTERM): then the hook is closing the command and will end the JVM with 0.
     */
    public static boolean cancel(Thread hook) {
        try {
            Runtime.getRuntime().removeShutdownHook(hook);
            return true;
        } catch (IllegalStateException shuttingDown) {
            return false;
        }
    }
}
