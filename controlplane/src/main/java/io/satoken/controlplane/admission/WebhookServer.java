package io.satoken.controlplane.admission;

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
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The HTTPS server the API server calls: AdmissionReview v1 in, AdmissionReview v1 out, over TLS 1.2+.
 *
 * <p>Each request, in order:
 * <ol>
 *   <li>TLS with the {@link ServingCertificate}'s context at the time the connection opened;</li>
 *   <li>the request must arrive whole within {@code requestTimeout} (else 408 and the connection closes);
 *       a body announced larger than {@code maxBodyBytes} is refused (413) before any of it is read, and one
 *       that would take the bodies held at once, arriving or waiting for review, past {@code bodyBudgetBytes}
 *       is refused (503) likewise (see {@link BodyBudget});</li>
 *   <li>only {@code POST} to a known path with a JSON body is reviewed (else 405, 404 or 415);</li>
 *   <li>the review runs on a worker pool, never on the network threads, because a ServiceAccount lookup may
 *       wait on the API server; a full pool answers at once (503) rather than queueing without bound;</li>
 *   <li>a review that takes longer than {@code reviewTimeout} is answered as denied (503).</li>
 * </ol>
 * Every answer that is not a 404/405 carries an AdmissionReview body; a review the webhook could not
 * make sense of is denied with a message saying why, never answered with a stack trace.
 *
 * <p>Step 2 is {@link RequestDeadline}, {@link BodyClaim} and {@link BodyLimit}; steps 3–5 are {@link ReviewHandler};
 * {@link WebhookResponses} writes every answer. This class assembles them into the pipeline and runs the threads.
 */
public final class WebhookServer implements AutoCloseable {

    /** Bounds on what one request may cost. */
    public record Limits(int maxBodyBytes, Duration requestTimeout, Duration reviewTimeout, Duration idleTimeout,
            int workers, int queue, long bodyBudgetBytes) {

        /**
         * 7 MiB bodies (an AdmissionReview holds up to two objects of etcd's 1.5 MiB, JSON-encoded); a request
         * must arrive within 10 s and be reviewed within 8 s, inside the API server's 10 s default; keep-alive
         * connections close after 90 s idle, as Go's HTTP client closes its own. 32 MiB of bodies at once:
         * four of the largest, or a thousand pods of 30 KiB, in a heap of 384 MiB (a 512 MiB limit at 75%).
         */
        public static Limits defaults() {
            return new Limits(7 * 1024 * 1024, Duration.ofSeconds(10), Duration.ofSeconds(8), Duration.ofSeconds(90),
                    16, 1024, 32L * 1024 * 1024);
        }
    }

    private final InetSocketAddress requested;
    private final ServingCertificate certificate;
    private final Map<String, Admission> routes;
    private final Limits limits;
    private final WebhookMetrics metrics;
    private final BodyBudget budget;
    private EventLoopGroup boss;
    private EventLoopGroup network;
    private ThreadPoolExecutor reviewers;
    private Channel listener;

    public WebhookServer(InetSocketAddress address, ServingCertificate certificate, Map<String, Admission> routes,
            Limits limits, WebhookMetrics metrics) {
        this.requested = address;
        this.certificate = certificate;
        this.routes = Map.copyOf(routes);
        this.limits = limits;
        this.metrics = metrics;
        metrics.expect(this.routes.keySet());
        this.budget = new BodyBudget(limits.bodyBudgetBytes());
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
                .childOption(ChannelOption.TCP_NODELAY, true)
                .childHandler(new ChannelInitializer<SocketChannel>() {
                    @Override
                    protected void initChannel(SocketChannel channel) {
                        channel.pipeline()
                                .addLast("tls", certificate.context().newHandler(channel.alloc()))
                                .addLast("idle", new IdleStateHandler(0, 0, limits.idleTimeout().toMillis(),
                                        TimeUnit.MILLISECONDS))
                                .addLast("request-started", RequestDeadline.starting(limits.requestTimeout(), metrics))
                                .addLast("http", new HttpServerCodec())
                                .addLast("request-received", RequestDeadline.stopping(limits.requestTimeout(), metrics))
                                .addLast("body-budget", new BodyClaim(budget, limits.maxBodyBytes(), metrics))
                                .addLast("aggregate", new BodyLimit(limits.maxBodyBytes(), metrics))
                                .addLast("review", new ReviewHandler(routes, reviewers, limits, metrics));
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

    public synchronized boolean serving() {
        return listener != null && listener.isActive();
    }

    @Override
    public synchronized void close() {
        if (listener != null) {
            listener.close().syncUninterruptibly();
        }
        if (boss != null) {
            boss.shutdownGracefully(0, 2, TimeUnit.SECONDS);
            network.shutdownGracefully(0, 2, TimeUnit.SECONDS);
            reviewers.shutdownNow();
        }
    }
}
