package io.satoken.agent.reads;

import com.sun.jna.LastErrorException;
import com.sun.jna.Memory;
import com.sun.jna.NativeLong;
import io.satoken.common.kube.Failures;
import java.io.IOException;
import java.nio.charset.Charset;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.concurrent.atomic.AtomicBoolean;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Reports the opens of files in watched directories, from Linux inotify(7) on one reader thread. inotify watches
 * inodes, so it sees an open through any mount of the directory: a pod reading through a read-only bind mount,
 * where atime does not change, is seen too.
 */
public final class Inotify implements AutoCloseable {

    /** What the reader thread reports; called on that one thread, must be quick and must not throw. */
    public interface Listener {
        /** A file (not a directory) named {@code name} in the watched directory {@code wd} was opened. */
        void opened(int wd, String name);

        /** The watch {@code wd} is gone (its directory was deleted, or unwatch was called); wd may be reused later. */
        void ignored(int wd);

        /** The kernel's event queue overflowed: some opens were lost. */
        void overflow();
    }

    private static final Logger log = LoggerFactory.getLogger(Inotify.class);

    static final int IN_OPEN = 0x20;
    static final int IN_Q_OVERFLOW = 0x4000;
    static final int IN_IGNORED = 0x8000;
    static final int IN_ONLYDIR = 0x01000000;
    static final int IN_EXCL_UNLINK = 0x04000000;
    static final int IN_ISDIR = 0x40000000;

    /** struct inotify_event: int wd, uint32 mask, uint32 cookie, uint32 len, then len bytes of NUL-padded name. */
    private static final int EVENT_HEADER = 16;
    /** Room for hundreds of events per read(2); one needs at most 16 + NAME_MAX + 1 bytes. */
    private static final int BUFFER_SIZE = 16 * 1024;
    /** The charset the JDK turns file names into bytes with, so names here match the agent's {@link Path}s. */
    private static final Charset FILE_NAMES = Charset.forName(
            System.getProperty("sun.jnu.encoding", Charset.defaultCharset().name()));

    private final int inotifyFd;
    private final int wakeFd;
    private final Listener listener;
    private final Thread reader;
    private final AtomicBoolean closed = new AtomicBoolean();
    /** Guarded by this: false once the fds are closed, after which their numbers may belong to other files. */
    private boolean fdsOpen = true;
    /** Set on the reader thread when the listener itself calls close: the reader closes the fds as it ends. */
    private boolean closeFdsOnExit;

    private Inotify(int inotifyFd, int wakeFd, Listener listener, String threadName) {
        this.inotifyFd = inotifyFd;
        this.wakeFd = wakeFd;
        this.listener = listener;
        this.reader = new Thread(this::run, threadName);
        reader.setDaemon(true);
    }

    /**
     * Starts the reader thread (daemon, named threadName).
     *
     * @throws IOException when inotify cannot be used here: not Linux, JNA's native library cannot load, or
     *     inotify_init1 fails; the message says which, with the errno text
     */
    public static Inotify open(Listener listener, String threadName) throws IOException {
        String os = System.getProperty("os.name", "");
        if (!os.startsWith("Linux")) {
            throw new IOException("inotify cannot be used: it is Linux's, and this is " + os);
        }
        try {
            Libc.load();
        } catch (LinkageError e) {
            throw new IOException("inotify cannot be used: JNA's native library or libc did not load: " + e, e);
        }
        int inotifyFd;
        try {
            inotifyFd = Libc.inotify_init1(Libc.O_NONBLOCK | Libc.O_CLOEXEC);
        } catch (LastErrorException e) {
            String limit = e.getErrorCode() == Libc.EMFILE
                    ? "; the user's inotify instances (fs.inotify.max_user_instances) or the open files are at their limit"
                    : "";
            throw new IOException("inotify cannot be used: inotify_init1: " + Libc.describe(e) + limit, e);
        }
        int wakeFd;
        try {
            wakeFd = Libc.eventfd(0, Libc.O_NONBLOCK | Libc.O_CLOEXEC);
        } catch (LastErrorException e) {
            closeQuietly(inotifyFd);
            throw new IOException("inotify cannot be used: eventfd: " + Libc.describe(e), e);
        }
        Inotify inotify = new Inotify(inotifyFd, wakeFd, listener, threadName);
        inotify.reader.start();
        return inotify;
    }

    /**
     * Watches a directory for opens of the files in it. Watching the same directory again returns the same wd.
     *
     * @return the watch descriptor the listener's calls name
     * @throws IOException with the path and errno text: ENOENT, ENOTDIR, ENOSPC (the watch limit is reached), ...
     */
    public synchronized int watchOpens(Path dir) throws IOException {
        if (!fdsOpen) {
            throw new IllegalStateException("inotify is closed; cannot watch " + dir);
        }
        byte[] name = dir.toString().getBytes(FILE_NAMES);
        try {
            return Libc.inotify_add_watch(inotifyFd, Arrays.copyOf(name, name.length + 1),
                    IN_OPEN | IN_ONLYDIR | IN_EXCL_UNLINK);
        } catch (LastErrorException e) {
            String limit = e.getErrorCode() == Libc.ENOSPC
                    ? "; the user's inotify watches (fs.inotify.max_user_watches) are at their limit"
                    : "";
            throw new IOException("cannot watch " + dir + " for opens: " + Libc.describe(e) + limit, e);
        }
    }

    /** Removes a watch; a wd already gone (EINVAL) is not an error. The kernel then reports ignored(wd). */
    public synchronized void unwatch(int wd) {
        if (!fdsOpen) {
            return;
        }
        try {
            Libc.inotify_rm_watch(inotifyFd, wd);
        } catch (LastErrorException e) {
            if (e.getErrorCode() != Libc.EINVAL) {
                throw new IllegalStateException("inotify_rm_watch " + wd + ": " + Libc.describe(e), e);
            }
        }
    }

    /** Stops the reader thread (wakes it without waiting for an event), joins it, closes the fds. Idempotent. */
    @Override
    public void close() {
        if (!closed.compareAndSet(false, true)) {
            return;
        }
        wake();
        if (Thread.currentThread() == reader) {
            // the listener closed: joining would wait for this very thread
            closeFdsOnExit = true;
            return;
        }
        boolean interrupted = false;
        while (reader.isAlive()) {
            try {
                reader.join();
            } catch (InterruptedException e) {
                interrupted = true;
            }
        }
        closeFds();
        if (interrupted) {
            Thread.currentThread().interrupt();
        }
    }

    private void wake() {
        try (Memory one = new Memory(8)) {
            one.setLong(0, 1);
            Libc.write(wakeFd, one, new NativeLong(8));
        } catch (LastErrorException e) {
            // only EAGAIN, when the counter is already far from zero: the reader is being woken anyway
            log.debug("inotify wake-up: {}", Libc.describe(e));
        }
    }

    private synchronized void closeFds() {
        fdsOpen = false;
        closeQuietly(inotifyFd);
        closeQuietly(wakeFd);
    }

    private static void closeQuietly(int fd) {
        try {
            Libc.close(fd);
        } catch (LastErrorException e) {
            log.debug("closing inotify fd {}: {}", fd, Libc.describe(e));
        }
    }

    /**
     * The reader thread:
     * 1. block in poll(2) on the inotify fd and the wake-up eventfd, with no timeout;
     * 2. if close woke it, end;
     * 3. otherwise read(2) the nonblocking inotify fd until EAGAIN, each read whole events into the buffer;
     * 4. report each event to the listener, then go back to 1.
     */
    private void run() {
        try (Memory fds = new Memory(2L * Libc.POLLFD_SIZE); Memory buffer = new Memory(BUFFER_SIZE)) {
            fds.clear();
            fds.setInt(0, inotifyFd);
            fds.setShort(4, Libc.POLLIN);
            fds.setInt(Libc.POLLFD_SIZE, wakeFd);
            fds.setShort(Libc.POLLFD_SIZE + 4, Libc.POLLIN);
            while (true) {
                if (!poll(fds)) { // 1
                    continue;
                }
                if (closed.get() || fds.getShort(Libc.POLLFD_SIZE + 6) != 0) { // 2
                    return;
                }
                if (fds.getShort(6) != 0) { // 3
                    drain(buffer);
                }
            }
        } catch (LastErrorException e) {
            log.warn("inotify reader {} stopped; opens are no longer seen: {}", reader.getName(), Libc.describe(e));
        } finally {
            if (closeFdsOnExit) {
                closeFds();
            }
        }
    }

    /** Returns false when a signal interrupted the wait (EINTR), for the caller to wait again. */
    private static boolean poll(Memory fds) {
        try {
            Libc.poll(fds, new NativeLong(2), -1);
            return true;
        } catch (LastErrorException e) {
            if (e.getErrorCode() == Libc.EINTR) {
                return false;
            }
            throw e;
        }
    }

    private void drain(Memory buffer) {
        while (true) {
            long length;
            try {
                length = Libc.read(inotifyFd, buffer, new NativeLong(BUFFER_SIZE)).longValue();
            } catch (LastErrorException e) {
                if (e.getErrorCode() == Libc.EAGAIN) {
                    return;
                }
                if (e.getErrorCode() == Libc.EINTR) {
                    continue;
                }
                throw e;
            }
            if (length <= 0) {
                return;
            }
            for (int offset = 0; offset + EVENT_HEADER <= length; ) { // 4
                int nameLength = buffer.getInt(offset + 12);
                report(buffer, offset, nameLength);
                offset += EVENT_HEADER + nameLength;
            }
        }
    }

    private void report(Memory buffer, int offset, int nameLength) {
        int wd = buffer.getInt(offset);
        int mask = buffer.getInt(offset + 4);
        try {
            if ((mask & IN_Q_OVERFLOW) != 0) {
                listener.overflow();
            } else if ((mask & IN_IGNORED) != 0) {
                listener.ignored(wd);
            } else if ((mask & IN_OPEN) != 0 && (mask & IN_ISDIR) == 0 && nameLength > 0) {
                // an open of the directory itself (a listing) has no name; a subdirectory's has IN_ISDIR
                listener.opened(wd, name(buffer.getByteArray(offset + EVENT_HEADER, nameLength)));
            }
        } catch (RuntimeException e) {
            log.debug("inotify listener failed ({}); the reader goes on", Failures.inWords(e));
        }
    }

    /** The name up to its first NUL: the kernel pads it to a multiple of the event's alignment. */
    private static String name(byte[] padded) {
        int end = 0;
        while (end < padded.length && padded[end] != 0) {
            end++;
        }
        return new String(padded, 0, end, FILE_NAMES);
    }
}
