package io.satoken.common.health;

import io.satoken.common.kube.Failures;
import java.io.IOException;
import java.net.SocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.time.Duration;
import java.util.Locale;
import java.util.Queue;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * An HTTP/1.1 server for body-less requests (probes, scrapes) that no client can stall, on a TCP address or a Unix
 * domain socket (see {@link Transport}).
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

    private final SocketAddress requested;
    private final Transport transport;
    private final Handler handler;
    private final Limits limits;
    private final String name;
    private final Queue<Runnable> answered = new ConcurrentLinkedQueue<>();
    // the network thread's alone
    private final OpenConnections open;
    private final ByteBuffer discard = ByteBuffer.allocate(4096);
    private ServerSocketChannel listener;
    private SelectionKey listening;
    private long acceptPausedUntil;
    private boolean acceptPaused;
    private Selector selector;
    private ThreadPoolExecutor workers;
    private Thread network;
    private volatile boolean running;

    /** Binds nothing yet; {@code address} is an {@code InetSocketAddress} or a {@code UnixDomainSocketAddress}. */
    NonBlockingHttpServer(SocketAddress address, Handler handler, Limits limits, String name) {
        this.requested = address;
        this.transport = Transport.of(address);
        this.handler = handler;
        this.limits = limits;
        this.name = name;
        this.open = new OpenConnections(limits.maxConnections(), limits.maxConnectionsPerClient());
    }

    /** Binds and starts the network thread and the workers. */
    synchronized void start() throws IOException {
        ServerSocketChannel channel = transport.open();
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

    /** The bound address: an {@code InetSocketAddress} over TCP, else a {@code UnixDomainSocketAddress}. */
    synchronized SocketAddress address() throws IOException {
        return listener.getLocalAddress();
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
            open.all().forEach(this::close);
            quietly(listener);
            quietly(selector);
        }
    }

    private long millisToNextDeadline() {
        long now = System.nanoTime();
        long wait = Math.min(acceptPaused ? acceptPausedUntil - now : Long.MAX_VALUE, open.nanosToNextDeadline(now));
        return wait == Long.MAX_VALUE ? 0 : Math.max(1, TimeUnit.NANOSECONDS.toMillis(wait) + 1);
    }

    private void accept() {
        for (int i = 0; i < ACCEPTS_PER_ROUND; i++) {
            SocketChannel channel;
            try {
                channel = listener.accept();
            } catch (IOException e) {
                log.warn("{}: cannot accept connections, pausing {} ms: {}", name, ACCEPT_PAUSE.toMillis(),
                        Failures.inWords(e));
                acceptPaused = true;
                acceptPausedUntil = System.nanoTime() + ACCEPT_PAUSE.toNanos();
                listening.interestOps(0);
                return;
            }
            if (channel == null) {
                return;
            }
            try {
                ClientKey client = ClientKey.of(channel.getRemoteAddress());
                if (!open.makeRoomFor(client, this::makeRoom)) {
                    log.debug("{}: refused a connection from {}: it holds {} connections, none waiting",
                            name, client, open.held(client));
                    channel.close();
                    continue;
                }
                channel.configureBlocking(false);
                transport.configure(channel);
                SelectionKey key = channel.register(selector, SelectionKey.OP_READ);
                HttpConnection connection = new HttpConnection(this, limits, channel, key, client);
                key.attach(connection);
                open.add(connection);
            } catch (IOException e) {
                quietly(channel);
            }
        }
    }

    /** Step 1: a connection still waiting for its request is closed for a new one. */
    private void makeRoom(HttpConnection connection, String limit) {
        log.debug("{}: closed a waiting connection from {} to make room within {}", name, connection.client, limit);
        close(connection);
    }

    private void ready(SelectionKey key) {
        HttpConnection connection = (HttpConnection) key.attachment();
        try {
            if (!key.isValid()) {
                return;
            }
            if (key.isReadable()) {
                connection.readable(discard);
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
        for (HttpConnection connection : open.pastDeadline(System.nanoTime())) {
            if (connection.state != HttpConnection.State.LINGERING) {
                log.debug("{}: closed a connection from {}: {} past its deadline", name, connection.client,
                        connection.state.name().toLowerCase(Locale.ROOT));
            }
            close(connection);
        }
    }

    /** Step 3: a worker computes the answer; the network thread writes it. */
    void dispatch(HttpConnection connection, Request request, boolean headOnly) throws IOException {
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
                answered.add(() -> connection.answered(done, headOnly));
                selector.wakeup();
            });
        } catch (RejectedExecutionException e) {
            connection.respond(Response.text(503, "busy\n"), headOnly);
        }
    }

    /** Closes a connection and forgets it; the connection calls it too, on its client's end of file. */
    void close(HttpConnection connection) {
        open.remove(connection);
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
}
