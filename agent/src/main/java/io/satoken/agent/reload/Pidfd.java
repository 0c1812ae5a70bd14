package io.satoken.agent.reload;

import com.sun.jna.LastErrorException;
import com.sun.jna.Native;
import com.sun.jna.Platform;
import com.sun.jna.Pointer;

/**
 * pidfd_open(2) and pidfd_send_signal(2), bound by JNA's direct mapping (glibc 2.36 or later, Linux 5.3 or later).
 * A pidfd names one process, not a number: a signal sent through it reaches that process or fails with ESRCH, never
 * a process that took its number later. Loading this class throws a {@link LinkageError} where they are missing.
 */
final class Pidfd {

    static final int ESRCH = 3;

    static {
        Native.register(Pidfd.class, Platform.C_LIBRARY_NAME);
    }

    private Pidfd() {
    }

    static native int pidfd_open(int pid, int flags) throws LastErrorException;

    static native int pidfd_send_signal(int pidfd, int sig, Pointer info, int flags) throws LastErrorException;

    static native int close(int fd) throws LastErrorException;

    static native String strerror(int errnum);
}
