package io.satoken.controlplane.https;

import io.netty.bootstrap.ServerBootstrap;
import io.netty.channel.Channel;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.nio.NioIoHandler;
import io.netty.channel.socket.SocketChannel;
import io.netty.channel.socket.nio.NioServerSocketChannel;
import io.netty.handler.codec.http.HttpServerCodec;
import io.netty.handler.timeout.IdleStateHandler;
import io.netty.channel.socket.nio.NioChannelOption;
import java.net.InetSocketAddress;
import java.net.StandardSocketOptions;
import java.time.Duration;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The HTTPS server the API server calls, over TLS 1.2+: JSON in, the {@link Endpoint}'s JSON out.
 *
 * <p>Each request, in order:
 * <ol>
 *   <li>TLS with the {@link ServingCertificate}'s context at the time the connection opened;</li>
 *   <li>the request must arrive whole within {@code requestTimeout} (else 408 and the connection closes);
 *       a body announced larger than {@code maxBodyBytes} is refused (413) before any of it is read, and one
 *       that would take the bodies held at once, arriving or waiting for review, past {@code bodyBudgetBytes},
 *       or its client's past {@code clientBodyBytes}, is refused (503) likewise (see {@link BodyBudget}); a body
 *       that falls behind its {@link BodyPace} is cut (408) and its claim given back;</li>
 *   <li>only {@code POST} to a known path with a JSON body is reviewed (else 405, 404 or 415);</li>
 *   <li>the endpoint answers on a worker pool, never on the network threads, because an answer may wait on the
 *       API server; a full pool answers at once (503) rather than queueing without bound;</li>
 *   <li>an answer that takes longer than {@code reviewTimeout} is replaced by the endpoint's late answer.</li>
 * </ol>
 * Every answer that is not a 404/405 carries a body the endpoint wrote, the server's own refusals included
 * ({@link Endpoint#refusal}), so the client reads every one in the same format.
 *
 * <p>Step 2 is {@link RequestDeadline}, {@link BodyClaim} and {@link BodyLimit}; steps 3–5 are
 * {@link RequestHandler}; {@link WebhookResponses} writes every answer. This class assembles them into the pipeline
 * and runs the threads.
 *
 * <p>{@link #drain} stops it without failing a review: it stops reporting itself {@link #serving()} (so the
 * readiness check fails and the Service stops sending it new connections) but goes on answering for a delay,
 * each answer closing its connection, then stops accepting, closes the idle connections and waits for the reviews
 * in progress ({@link InFlight}).
 */
public final class WebhookServer implements AutoCloseable {

    /**
     * Bounds on what one request, and one client, may cost.
     *
     * @param bodyBudgetBytes the bytes of bodies held at once, arriving or waiting for review
     * @param clientBodyBytes the part of them one {@link Client} may hold
     * @param minBodyBytesPerSecond with {@code bodyGrace}: the {@link BodyPace} a body must keep; 0 for none, so
     *     that only the request deadline bounds a slow body (tests of that deadline)
     */
    public record Limits(int maxBodyBytes, Duration requestTimeout, Duration reviewTimeout, Duration idleTimeout,
            int workers, int queue, long bodyBudgetBytes, long clientBodyBytes, long minBodyBytesPerSecond,
            Duration bodyGrace) {

        /** Bodies held at once, with what their parses keep: this fraction of the heap. */
        static final int HEAP_FRACTION = 4;
        /** One client may hold this fraction of the body budget (but always one body of the largest size). */
        static final int CLIENT_FRACTION = 4;

        public Limits {
            if (clientBodyBytes > bodyBudgetBytes) {
                throw new IllegalArgumentException("a client's share of the body budget (" + clientBodyBytes
                        + " bytes) cannot exceed the budget (" + bodyBudgetBytes + " bytes)");
            }
        }

        /** The defaults for this JVM's heap ({@link Runtime#maxMemory}). */
        public static Limits defaults() {
            return forHeap(Runtime.getRuntime().maxMemory());
        }

        /**
         * 7 MiB bodies (the API server's review holds up to two objects of etcd's 1.5 MiB, JSON-encoded); a request
         * must arrive within 10 s and be reviewed within 8 s, inside the API server's 10 s default; keep-alive
         * connections close after 90 s idle, as Go's HTTP client closes its own. Bodies held at once, and what
         * their parses keep (the endpoint claims it from the same budget: {@link Endpoint.Memory}): a quarter of the
         * heap, never less than one body of the largest size (96 MiB of a 384 MiB heap, a 512 MiB limit at 75%). One
         * client holds at most a quarter of that, so four clients, the API server among them, each have room
         * whatever the others send. After a 1 s grace a body keeps 64 KiB/s or the pace that makes the 10 s
         * deadline, whichever is faster.
         */
        static Limits forHeap(long heapBytes) {
            int maxBody = 7 * 1024 * 1024;
            long budget = Math.max(maxBody, heapBytes / HEAP_FRACTION);
            long client = Math.min(budget, Math.max(maxBody, budget / CLIENT_FRACTION));
            return new Limits(maxBody, Duration.ofSeconds(10), Duration.ofSeconds(8), Duration.ofSeconds(90),
                    16, 1024, budget, client, 64 * 1024, Duration.ofSeconds(1));
        }

        /** The pace a body must keep; null when none is set. */
        BodyPace pace() {
            return minBodyBytesPerSecond == 0 ? null : new BodyPace(minBodyBytesPerSecond, bodyGrace, requestTimeout);
        }

        /** How often an arriving body's pace is checked: four times a grace period, at most every 250 ms. */
        Duration paceTick() {
            Duration quarter = bodyGrace.dividedBy(4);
            return quarter.compareTo(Duration.ofMillis(250)) > 0 ? Duration.ofMillis(250)
                    : quarter.compareTo(Duration.ofMillis(10)) < 0 ? Duration.ofMillis(10) : quarter;
        }
    }

    /** Waits out the drain's delay; tests give one that waits on a latch. */
    @FunctionalInterface
    public interface Pause {
        void await(Duration duration) throws InterruptedException;
    }

    /** The real pause: the thread waits for the duration. */
    public static final Pause WAIT = duration -> Thread.sleep(duration.toMillis());

    private static final Logger log = LoggerFactory.getLogger(WebhookServer.class);

    private final InetSocketAddress requested;
    private final ServingCertificate certificate;
    private final Endpoint endpoint;
    private final Limits limits;
    private final WebhookMetrics metrics;
    private final BodyBudget budget;
    private final AtomicBoolean draining = new AtomicBoolean();
    private final InFlight inFlight = new InFlight(draining);
    private final boolean reusePort;
    private EventLoopGroup boss;
    private EventLoopGroup network;
    private ThreadPoolExecutor reviewers;
    private Channel listener;

    public WebhookServer(InetSocketAddress address, ServingCertificate certificate, Endpoint endpoint,
            Limits limits, WebhookMetrics metrics) {
        this(address, certificate, endpoint, limits, metrics, false);
    }

    /**
     * @param reusePort bind with {@code SO_REUSEPORT}, so that a second process of the same user may listen on the
     *     same address and the kernel shares new connections between them: the overlap a rolling update of pods
     *     on the host's network needs on one node
     */
    public WebhookServer(InetSocketAddress address, ServingCertificate certificate, Endpoint endpoint,
            Limits limits, WebhookMetrics metrics, boolean reusePort) {
        this.reusePort = reusePort;
        this.requested = address;
        this.certificate = certificate;
        this.endpoint = endpoint;
        this.limits = limits;
        this.metrics = metrics;
        metrics.expect(endpoint.paths());
        this.budget = new BodyBudget(limits.bodyBudgetBytes(), limits.clientBodyBytes());
    }

    /** Binds and starts serving; returns once the port is bound. */
    public synchronized void start() throws InterruptedException {
        AtomicInteger threads = new AtomicInteger();
        reviewers = new ThreadPoolExecutor(limits.workers(), limits.workers(), 60, TimeUnit.SECONDS,
                new ArrayBlockingQueue<>(limits.queue()), r -> {
                    Thread thread = new Thread(r, "satoken-webhook-review-" + threads.incrementAndGet());
                    thread.setDaemon(true);
                    return thread;
                });
        boss = new MultiThreadIoEventLoopGroup(1, NioIoHandler.newFactory());
        network = new MultiThreadIoEventLoopGroup(NioIoHandler.newFactory());
        ServerBootstrap bootstrap = new ServerBootstrap()
                .group(boss, network)
                .channel(NioServerSocketChannel.class)
                .option(ChannelOption.SO_BACKLOG, 1024)
                .option(NioChannelOption.of(StandardSocketOptions.SO_REUSEPORT), reusePort)
                .childOption(ChannelOption.TCP_NODELAY, true)
                .childHandler(new ChannelInitializer<SocketChannel>() {
                    @Override
                    protected void initChannel(SocketChannel channel) {
                        channel.pipeline()
                                .addLast("tls", certificate.context().newHandler(channel.alloc()))
                                .addLast("idle", new IdleStateHandler(0, 0, limits.idleTimeout().toMillis(),
                                        TimeUnit.MILLISECONDS))
                                .addLast("request-started", RequestDeadline.starting(limits.requestTimeout(), metrics,
                                        endpoint))
                                .addLast("http", new HttpServerCodec())
                                .addLast("in-flight", inFlight)
                                .addLast("request-received", RequestDeadline.stopping(limits.requestTimeout(), metrics))
                                .addLast("body-budget", new BodyClaim(budget, limits.maxBodyBytes(), limits.pace(),
                                        limits.paceTick(), System::nanoTime, metrics, endpoint))
                                .addLast("aggregate", new BodyLimit(limits.maxBodyBytes(), metrics, endpoint))
                                .addLast("review", new RequestHandler(endpoint, reviewers, limits, metrics));
                    }
                });
        listener = bootstrap.bind(requested).sync().channel();
    }

    /** The bound address (the real port when 0 was asked for). */
    public synchronized InetSocketAddress address() {
        return (InetSocketAddress) listener.localAddress();
    }

    /** Bytes of request bodies held now, arriving or waiting for review. */
    long bodyBytesHeld() {
        return budget.held();
    }

    /** Listening, and not draining. */
    public synchronized boolean serving() {
        return listener != null && listener.isActive() && !draining.get();
    }

    /** Requests received and not yet answered. */
    int requestsInProgress() {
        return inFlight.requests();
    }

    /**
     * Stops serving without failing a review, then returns; {@link #close()} after it ends the rest.
     * <ol>
     *   <li>at once: {@link #serving()} turns false, and every answer from now on closes its connection;</li>
     *   <li>for {@code delay}: new connections are still accepted and answered, while the endpoint is taken out of
     *       the Service's and the API server's clients move to other replicas;</li>
     *   <li>then the listener closes, and the connections with no request in progress;</li>
     *   <li>and the reviews in progress are answered, waited for at most {@code limit}.</li>
     * </ol>
     *
     * @return true when every review in progress was answered within {@code limit}
     */
    public boolean drain(Duration delay, Duration limit, Pause pause) throws InterruptedException {
        if (!draining.compareAndSet(false, true)) {
            return inFlight.awaitNone(limit);
        }
        log.info("webhook draining: no longer ready; answering new connections for {} ms more, then reviews in"
                + " progress for at most {} ms", delay.toMillis(), limit.toMillis());
        pause.await(delay);
        Channel closing;
        synchronized (this) {
            closing = listener;
        }
        if (closing != null) {
            closing.close().syncUninterruptibly();
        }
        inFlight.closeIdle();
        boolean answered = inFlight.awaitNone(limit);
        if (answered) {
            log.info("webhook drained: every review in progress was answered");
        } else {
            log.warn("webhook drain: {} reviews still in progress after {} ms; closing their connections",
                    inFlight.requests(), limit.toMillis());
        }
        return answered;
    }

    @Override
    public synchronized void close() {
        draining.set(true);
        if (listener != null) {
            listener.close().syncUninterruptibly();
        }
        inFlight.closeAll();
        if (boss != null) {
            boss.shutdownGracefully(0, 2, TimeUnit.SECONDS);
            network.shutdownGracefully(0, 2, TimeUnit.SECONDS);
            reviewers.shutdownNow();
        }
    }
}
