package io.satoken.agent.reads;

import com.sun.jna.LastErrorException;
import com.sun.jna.Native;
import com.sun.jna.NativeLong;
import com.sun.jna.Platform;
import com.sun.jna.Pointer;

/**
 * The libc functions {@link Inotify} calls, bound by JNA's direct mapping. Loading this class loads JNA's native
 * library and libc, so its first use throws a {@link LinkageError} where they cannot load. A call that fails throws
 * {@link LastErrorException} with errno.
 */
final class Libc {

    static final int EINTR = 4;
    static final int EAGAIN = 11;
    static final int EMFILE = 24;
    static final int EINVAL = 22;
    static final int ENOSPC = 28;

    /** inotify_init1's and eventfd's flags have the values of O_NONBLOCK and O_CLOEXEC. */
    static final int O_NONBLOCK = 04000;
    static final int O_CLOEXEC = 02000000;

    static final short POLLIN = 0x1;
    /** A struct pollfd: int fd, short events, short revents. */
    static final int POLLFD_SIZE = 8;

    static {
        Native.register(Libc.class, Platform.C_LIBRARY_NAME);
    }

    private Libc() {
    }

    /** Does nothing but makes sure the class, and so the native libraries, are loaded. */
    static void load() {
    }

    static native int inotify_init1(int flags) throws LastErrorException;

    /** {@code path} is NUL-terminated. */
    static native int inotify_add_watch(int fd, byte[] path, int mask) throws LastErrorException;

    static native int inotify_rm_watch(int fd, int wd) throws LastErrorException;

    static native int eventfd(int initval, int flags) throws LastErrorException;

    static native int poll(Pointer fds, NativeLong nfds, int timeout) throws LastErrorException;

    static native NativeLong read(int fd, Pointer buf, NativeLong count) throws LastErrorException;

    static native NativeLong write(int fd, Pointer buf, NativeLong count) throws LastErrorException;

    static native int close(int fd) throws LastErrorException;

    static native String strerror(int errnum);

    /** errno as the message of an exception: its text and its number. */
    static String describe(LastErrorException e) {
        return strerror(e.getErrorCode()) + " (errno " + e.getErrorCode() + ")";
    }
}
