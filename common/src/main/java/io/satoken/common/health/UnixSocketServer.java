package io.satoken.common.health;

import static java.nio.file.LinkOption.NOFOLLOW_LINKS;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.ConnectException;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.channels.SocketChannel;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.attribute.BasicFileAttributes;
import java.nio.file.attribute.FileAttribute;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.Map;
import java.util.Objects;
import java.util.Set;

/**
 * Serves GET (and HEAD) requests on a Unix domain socket that only its owner may connect to, on a
 * {@link NonBlockingHttpServer}, so a local client that stalls cannot keep others from their answers. Other methods
 * are answered 405. Every client of the socket counts as one client, so the server's connection limit bounds them all.
 *
 * <p>{@link #start()}, in order:
 * <ol>
 *   <li>creates the socket's parent directory, mode 0700, if it is missing;</li>
 *   <li>looks at what is at the path: nothing is fine; anything but a socket is refused and left alone; a socket
 *       that accepts a connection is refused (another process serves it); a socket that refuses connections was
 *       left by a dead process and is deleted;</li>
 *   <li>binds in a new directory of mode 0700 next to the path, so that no other user can connect before step 4
 *       whatever the parent's mode and the process's umask (Java cannot set the umask);</li>
 *   <li>sets the socket's mode to 0600;</li>
 *   <li>links it to the path, which fails rather than replace a file that appeared there since step 2, and removes
 *       the private directory (named "." and digits; a process killed between steps 3 and 5 leaves it behind,
 *       empty but for the dead socket);</li>
 *   <li>starts serving.</li>
 * </ol>
 * Constructing it binds nothing; {@link #close()} stops serving and deletes the socket file, unless another server
 * has replaced it since.
 */
public final class UnixSocketServer implements AutoCloseable {

    /** Answers one GET (or HEAD) on a worker thread. path is the request path without query. */
    @FunctionalInterface
    public interface Handler {
        Answer handle(String path);
    }

    /** status, content type, body (UTF-8). */
    public record Answer(int status, String contentType, String body) {

        public Answer {
            Objects.requireNonNull(contentType, "contentType");
            Objects.requireNonNull(body, "body");
        }

        /** 200 with a JSON body. */
        public static Answer json(String body) {
            return new Answer(200, "application/json", body);
        }

        /** {@code status} with a UTF-8 text body. */
        public static Answer text(int status, String body) {
            return new Answer(status, "text/plain; charset=utf-8", body);
        }
    }

    private static final Set<PosixFilePermission> OWNER_DIR = PosixFilePermissions.fromString("rwx------");
    private static final FileAttribute<Set<PosixFilePermission>> OWNER_DIR_ATTRIBUTE =
            PosixFilePermissions.asFileAttribute(OWNER_DIR);
    private static final Set<PosixFilePermission> OWNER_FILE = PosixFilePermissions.fromString("rw-------");
    private static final int S_IFMT = 0170000;
    private static final int S_IFSOCK = 0140000;

    private final Path socket;
    private final Handler handler;
    private final String name;
    private final Limits limits;
    private NonBlockingHttpServer server;
    /** The socket file's identity once linked, so close() deletes it only if it is still this server's. */
    private Object fileKey;

    /** Binds nothing yet. name names the threads. */
    public UnixSocketServer(Path socket, Handler handler, String name) {
        this(socket, handler, name, oneClientLimits(Limits.defaults()));
    }

    UnixSocketServer(Path socket, Handler handler, String name, Limits limits) {
        this.socket = socket.toAbsolutePath();
        this.handler = Objects.requireNonNull(handler, "handler");
        this.name = Objects.requireNonNull(name, "name");
        this.limits = limits;
    }

    /**
     * Creates the socket's parent directory if missing (mode 0700 when it creates it), removes a stale socket file
     * left by a dead process, refuses when a live server answers on it or when the path is not a socket, binds
     * with mode 0600 (owner only) and starts serving; see the class comment for the steps.
     *
     * @throws IOException naming the socket path and what is wrong
     */
    public synchronized void start() throws IOException {
        if (server != null) {
            throw new IllegalStateException(socket + ": already serving");
        }
        Path parent = socket.getParent();
        if (!Files.isDirectory(parent)) { // 1
            Files.createDirectories(parent, OWNER_DIR_ATTRIBUTE);
            Files.setPosixFilePermissions(parent, OWNER_DIR); // whatever the umask
        }
        removeStale(); // 2
        Path privateDir = Files.createTempDirectory(parent, ".", OWNER_DIR_ATTRIBUTE); // 3
        Path bound = privateDir.resolve("s");
        NonBlockingHttpServer s = new NonBlockingHttpServer(UnixDomainSocketAddress.of(bound), this::answer, limits,
                name);
        try {
            s.start();
            Files.setPosixFilePermissions(bound, OWNER_FILE); // 4
            Object key = Files.readAttributes(bound, BasicFileAttributes.class, NOFOLLOW_LINKS).fileKey();
            Files.createLink(socket, bound); // 5
            fileKey = key;
        } catch (FileAlreadyExistsException e) {
            s.close();
            throw new IOException(socket + ": another process created it while this one started", e);
        } catch (IOException | RuntimeException e) {
            s.close();
            throw new IOException(socket + ": cannot serve on it: " + e.getMessage(), e);
        } finally {
            Files.deleteIfExists(bound);
            Files.deleteIfExists(privateDir);
        }
        server = s; // 6: it serves since s.start()
    }

    public Path socket() {
        return socket;
    }

    /** Stops serving and deletes the socket file it created. Idempotent. */
    @Override
    public synchronized void close() {
        if (server == null) {
            return;
        }
        try {
            // deleted first, so a client then finds no socket rather than one nobody answers
            Object now = Files.readAttributes(socket, BasicFileAttributes.class, NOFOLLOW_LINKS).fileKey();
            if (Objects.equals(fileKey, now)) {
                Files.delete(socket);
            }
        } catch (NoSuchFileException e) {
            // someone removed it already: nothing left to delete
        } catch (IOException e) {
            throw new UncheckedIOException(socket + ": cannot delete the socket file", e);
        } finally {
            server.close();
            server = null;
        }
    }

    /** Step 2. */
    private void removeStale() throws IOException {
        int mode;
        try {
            mode = (Integer) Files.getAttribute(socket, "unix:mode", NOFOLLOW_LINKS);
        } catch (NoSuchFileException e) {
            return;
        }
        if ((mode & S_IFMT) != S_IFSOCK) {
            throw new FileAlreadyExistsException(socket.toString(), null,
                    "it is not a socket; not deleting it, remove it or choose another path");
        }
        try (SocketChannel probe = SocketChannel.open(StandardProtocolFamily.UNIX)) {
            probe.configureBlocking(false); // a live server with a full backlog refuses to wait, not hangs us
            probe.connect(UnixDomainSocketAddress.of(socket));
        } catch (ConnectException refused) {
            Files.delete(socket); // nothing listens: a dead process left it
            return;
        } catch (IOException e) {
            throw new IOException(socket + ": cannot tell whether another process serves it: " + e.getMessage(), e);
        }
        throw new IOException(socket + ": another process serves it");
    }

    private Response answer(Request request) {
        if (!request.method().equals("GET") && !request.method().equals("HEAD")) {
            return new Response(405, "text/plain; charset=utf-8", "method not allowed\n", Map.of("Allow", "GET, HEAD"));
        }
        Answer answer = handler.handle(request.path());
        return new Response(answer.status(), answer.contentType(), answer.body(), Map.of());
    }

    /** All clients of the socket are one client; the server's connection limit is the one that bounds them. */
    private static Limits oneClientLimits(Limits limits) {
        return new Limits(limits.readTimeout(), limits.writeTimeout(), limits.maxHeadBytes(), limits.maxConnections(),
                limits.maxConnections(), limits.workers());
    }
}
