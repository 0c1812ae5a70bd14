package io.satoken.common.health;

import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.StandardSocketOptions;
import java.nio.ByteBuffer;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Queue;
import java.util.Set;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Predicate;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * An HTTP/1.1 server for body-less requests (probes, scrapes) that no client can stall.
 *
 * <p>The JDK's {@code HttpServer} reads a request on its worker thread with a blocking read, so a client
 * that sends half a request line holds a worker until it gives up; its only deadline
 * ({@code sun.net.httpserver.maxReqTime}) is JVM-wide, read once at class initialisation, counted in whole
 * seconds, and a client that reconnects as soon as it is cut still keeps every worker busy. Here one network
 * thread does all reading and writing without blocking, and workers only compute answers. Each connection,
 * in order:
 * <ol>
 *   <li>is accepted; if its client already holds {@code maxConnectionsPerClient} connections, or the server
 *       {@code maxConnections}, the oldest of those still waiting for its request is closed to make room
 *       (the newest connection is the likeliest to be a probe about to send), and if none is waiting the
 *       new one is closed;</li>
 *   <li>its request line and headers must arrive whole within {@code readTimeout}, however slowly they
 *       trickle, and fit {@code maxHeadBytes} (else 431); a body is never read;</li>
 *   <li>a worker computes the answer; the network thread never runs handler code;</li>
 *   <li>the client must take the answer within {@code writeTimeout};</li>
 *   <li>the server half-closes and reads what the client still sends for up to {@link #LINGER} before it
 *       closes, so a client still sending sees the answer rather than a reset. One request per
 *       connection: probes and scrapers open a new one each time anyway.</li>
 * </ol>
 */
final class NonBlockingHttpServer implements AutoCloseable {

    /** Bounds on what clients may hold. */
    record Limits(Duration readTimeout, Duration writeTimeout, int maxHeadBytes, int maxConnections,
            int maxConnectionsPerClient, int workers) {

        /**
         * A request within 5 s (kubelet sends its probe at once), its answer taken within 10 s, 8 KiB of
         * headers, 64 connections and 8 per client address, two workers so a scrape never waits on a probe.
         */
        static Limits defaults() {
            return new Limits(Duration.ofSeconds(5), Duration.ofSeconds(10), 8192, 64, 8, 2);
        }
    }

    /** What was asked: the method and the path without its query. */
    record Request(String method, String path) {
    }

    /** An answer; {@code headers} are sent besides Content-Type, Content-Length and Connection. */
    record Response(int status, String contentType, String body, Map<String, String> headers) {
        static Response text(int status, String body) {
            return new Response(status, "text/plain; charset=utf-8", body, Map.of());
        }
    }

    /** Computes answers on a worker thread. */
    interface Handler {
        Response handle(Request request);
    }

    static final Duration LINGER = Duration.ofSeconds(1);
    /** How long accepting pauses after it failed (out of file descriptors), rather than spinning. */
    private static final Duration ACCEPT_PAUSE = Duration.ofMillis(100);
    private static final int BACKLOG = 64;
    /** Accepts per round, so reads of connections already open are not starved by a flood of new ones. */
    private static final int ACCEPTS_PER_ROUND = 16;
    private static final Logger log = LoggerFactory.getLogger(NonBlockingHttpServer.class);

    private enum State { READING, HANDLING, WRITING, LINGERING }

    private final InetSocketAddress requested;
    private final Handler handler;
    private final Limits limits;
    private final String name;
    private final Queue<Runnable> answered = new ConcurrentLinkedQueue<>();
    // the network thread's alone
    private final Set<Connection> open = new LinkedHashSet<>();
    private final Map<InetAddress, Integer> perClient = new HashMap<>();
    private final ByteBuffer discard = ByteBuffer.allocate(4096);
    private ServerSocketChannel listener;
    private SelectionKey listening;
    private long acceptPausedUntil;
    private boolean acceptPaused;
    private Selector selector;
    private ThreadPoolExecutor workers;
    private Thread network;
    private volatile boolean running;

    NonBlockingHttpServer(InetSocketAddress address, Handler handler, Limits limits, String name) {
        this.requested = address;
        this.handler = handler;
        this.limits = limits;
        this.name = name;
    }

    /** Binds and starts the network thread and the workers. */
    synchronized void start() throws IOException {
        ServerSocketChannel channel = ServerSocketChannel.open();
        Selector opened = null;
        try {
            channel.bind(requested, BACKLOG);
            channel.configureBlocking(false);
            opened = Selector.open();
            listening = channel.register(opened, SelectionKey.OP_ACCEPT);
        } catch (IOException | RuntimeException e) {
            channel.close();
            if (opened != null) {
                opened.close();
            }
            throw e;
        }
        listener = channel;
        selector = opened;
        AtomicInteger count = new AtomicInteger();
        workers = new ThreadPoolExecutor(limits.workers(), limits.workers(), 0, TimeUnit.MILLISECONDS,
                new ArrayBlockingQueue<>(limits.maxConnections()), r -> {
                    Thread thread = new Thread(r, name + "-worker-" + count.incrementAndGet());
                    thread.setDaemon(true);
                    return thread;
                });
        running = true;
        network = new Thread(this::serve, name);
        network.setDaemon(true);
        network.start();
    }

    synchronized InetSocketAddress address() throws IOException {
        return (InetSocketAddress) listener.getLocalAddress();
    }

    @Override
    public synchronized void close() {
        if (network == null) {
            return;
        }
        running = false;
        selector.wakeup();
        try {
            network.join(TimeUnit.SECONDS.toMillis(5));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        workers.shutdownNow();
        network = null;
    }

    private void serve() {
        try {
            while (running) {
                selector.select(millisToNextDeadline());
                boolean accept = false;
                for (SelectionKey key : selector.selectedKeys()) {
                    if (key.channel() == listener) {
                        accept = true;
                    } else {
                        ready(key);
                    }
                }
                selector.selectedKeys().clear();
                if (accept) {
                    accept();
                }
                for (Runnable answer = answered.poll(); answer != null; answer = answered.poll()) {
                    answer.run();
                }
                expire();
                if (acceptPaused && System.nanoTime() - acceptPausedUntil >= 0) {
                    acceptPaused = false;
                    listening.interestOps(SelectionKey.OP_ACCEPT);
                }
            }
        } catch (IOException | RuntimeException e) {
            log.error("{} on {} stopped serving", name, requested, e);
        } finally {
            new ArrayList<>(open).forEach(this::close);
            quietly(listener);
            quietly(selector);
        }
    }

    private long millisToNextDeadline() {
        long now = System.nanoTime();
        long wait = acceptPaused ? acceptPausedUntil - now : Long.MAX_VALUE;
        for (Connection connection : open) {
            wait = Math.min(wait, connection.deadline - now);
        }
        return wait == Long.MAX_VALUE ? 0 : Math.max(1, TimeUnit.NANOSECONDS.toMillis(wait) + 1);
    }

    private void accept() {
        for (int i = 0; i < ACCEPTS_PER_ROUND; i++) {
            SocketChannel channel;
            try {
                channel = listener.accept();
            } catch (IOException e) {
                log.warn("{}: cannot accept connections, pausing {} ms: {}", name, ACCEPT_PAUSE.toMillis(),
                        e.toString());
                acceptPaused = true;
                acceptPausedUntil = System.nanoTime() + ACCEPT_PAUSE.toNanos();
                listening.interestOps(0);
                return;
            }
            if (channel == null) {
                return;
            }
            InetAddress client;
            try {
                client = ((InetSocketAddress) channel.getRemoteAddress()).getAddress();
                if (!makeRoomFor(client)) {
                    log.debug("{}: refused a connection from {}: it holds {} connections, none waiting",
                            name, client, perClient.getOrDefault(client, 0));
                    channel.close();
                    continue;
                }
                channel.configureBlocking(false);
                channel.setOption(StandardSocketOptions.TCP_NODELAY, true);
                SelectionKey key = channel.register(selector, SelectionKey.OP_READ);
                Connection connection = new Connection(channel, key, client);
                key.attach(connection);
                open.add(connection);
                perClient.merge(client, 1, Integer::sum);
            } catch (IOException e) {
                quietly(channel);
            }
        }
    }

    /** Step 1. */
    private boolean makeRoomFor(InetAddress client) {
        if (perClient.getOrDefault(client, 0) >= limits.maxConnectionsPerClient()) {
            return closeOldestWaiting(connection -> connection.client.equals(client), "its client's limit");
        }
        if (open.size() >= limits.maxConnections()) {
            return closeOldestWaiting(connection -> true, "the server's limit");
        }
        return true;
    }

    private boolean closeOldestWaiting(Predicate<Connection> among, String reason) {
        for (Connection connection : open) {
            if (connection.state == State.READING && among.test(connection)) {
                log.debug("{}: closed a waiting connection from {} to make room within {}", name, connection.client,
                        reason);
                close(connection);
                return true;
            }
        }
        return false;
    }

    private void ready(SelectionKey key) {
        Connection connection = (Connection) key.attachment();
        try {
            if (!key.isValid()) {
                return;
            }
            if (key.isReadable()) {
                connection.readable();
            } else if (key.isWritable()) {
                connection.writable();
            }
        } catch (IOException e) {
            close(connection);
        } catch (RuntimeException e) {
            log.warn("{}: closed a connection from {} after an unexpected failure", name, connection.client, e);
            close(connection);
        }
    }

    private void expire() {
        long now = System.nanoTime();
        for (Connection connection : new ArrayList<>(open)) {
            if (now - connection.deadline >= 0) {
                if (connection.state != State.LINGERING) {
                    log.debug("{}: closed a connection from {}: {} past its deadline", name, connection.client,
                            connection.state.name().toLowerCase(java.util.Locale.ROOT));
                }
                close(connection);
            }
        }
    }

    private void close(Connection connection) {
        if (open.remove(connection)) {
            perClient.computeIfPresent(connection.client, (client, count) -> count > 1 ? count - 1 : null);
        }
        connection.key.cancel();
        quietly(connection.channel);
    }

    private static void quietly(AutoCloseable closeable) {
        try {
            if (closeable != null) {
                closeable.close();
            }
        } catch (Exception e) {
            // closing is all that was asked; nothing to tell anyone
        }
    }

    /** One client connection; touched by the network thread only. */
    private final class Connection {
        final SocketChannel channel;
        final SelectionKey key;
        final InetAddress client;
        final ByteBuffer head = ByteBuffer.allocate(limits.maxHeadBytes());
        State state = State.READING;
        long deadline = System.nanoTime() + limits.readTimeout().toNanos();
        ByteBuffer answer;

        Connection(SocketChannel channel, SelectionKey key, InetAddress client) {
            this.channel = channel;
            this.key = key;
            this.client = client;
        }

        void readable() throws IOException {
            if (state == State.LINGERING) {
                discard.clear();
                if (channel.read(discard) < 0) {
                    close(this);
                }
                return;
            }
            int scanFrom = Math.max(0, head.position() - 3);
            if (channel.read(head) < 0) {
                close(this);
                return;
            }
            int end = RequestHead.end(head, scanFrom);
            if (end >= 0) {
                handle(end);
            } else if (!head.hasRemaining()) {
                respond(Response.text(431, "request headers exceed " + limits.maxHeadBytes() + " bytes\n"), false);
            }
        }

        /** Step 3. */
        private void handle(int end) throws IOException {
            Request request;
            try {
                request = RequestHead.parse(head, end);
            } catch (IllegalArgumentException e) {
                respond(Response.text(400, e.getMessage() + "\n"), false);
                return;
            }
            state = State.HANDLING;
            key.interestOps(0);
            deadline = System.nanoTime() + limits.writeTimeout().toNanos();
            boolean headOnly = request.method().equals("HEAD");
            try {
                workers.execute(() -> {
                    Response response;
                    try {
                        response = handler.handle(request);
                    } catch (RuntimeException e) {
                        log.warn("{}: {} {} failed", name, request.method(), request.path(), e);
                        response = Response.text(500, "internal error\n");
                    }
                    Response done = response;
                    answered.add(() -> {
                        if (state == State.HANDLING && channel.isOpen()) {
                            try {
                                respond(done, headOnly);
                            } catch (IOException | RuntimeException e) {
                                close(this);
                            }
                        }
                    });
                    selector.wakeup();
                });
            } catch (RejectedExecutionException e) {
                respond(Response.text(503, "busy\n"), headOnly);
            }
        }

        /** Step 4. */
        private void respond(Response response, boolean headOnly) throws IOException {
            byte[] body = response.body().getBytes(StandardCharsets.UTF_8);
            StringBuilder lines = new StringBuilder("HTTP/1.1 ").append(response.status()).append(' ')
                    .append(RequestHead.reason(response.status())).append("\r\n")
                    .append("Content-Type: ").append(response.contentType()).append("\r\n")
                    .append("Content-Length: ").append(body.length).append("\r\n")
                    .append("Connection: close\r\n");
            response.headers().forEach((header, value) ->
                    lines.append(header).append(": ").append(value).append("\r\n"));
            byte[] start = lines.append("\r\n").toString().getBytes(StandardCharsets.ISO_8859_1);
            answer = ByteBuffer.allocate(start.length + (headOnly ? 0 : body.length)).put(start);
            if (!headOnly) {
                answer.put(body);
            }
            answer.flip();
            state = State.WRITING;
            deadline = System.nanoTime() + limits.writeTimeout().toNanos();
            key.interestOps(SelectionKey.OP_WRITE);
            writable();
        }

        /** Steps 4 and 5. */
        void writable() throws IOException {
            channel.write(answer);
            if (answer.hasRemaining()) {
                return;
            }
            answer = null;
            channel.shutdownOutput();
            state = State.LINGERING;
            deadline = System.nanoTime() + LINGER.toNanos();
            key.interestOps(SelectionKey.OP_READ);
        }
    }
}
