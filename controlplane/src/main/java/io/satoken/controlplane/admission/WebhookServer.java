package io.satoken.controlplane.admission;

import io.netty.bootstrap.ServerBootstrap;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.ChannelDuplexHandler;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.SimpleChannelInboundHandler;
import io.netty.channel.nio.NioIoHandler;
import io.netty.channel.socket.SocketChannel;
import io.netty.channel.socket.nio.NioServerSocketChannel;
import io.netty.handler.codec.http.DefaultFullHttpResponse;
import io.netty.handler.codec.http.FullHttpRequest;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpContent;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaderValues;
import io.netty.handler.codec.http.HttpMessage;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.HttpObjectAggregator;
import io.netty.handler.codec.http.HttpRequest;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpServerCodec;
import io.netty.handler.codec.http.HttpUtil;
import io.netty.handler.codec.http.HttpVersion;
import io.netty.handler.codec.http.LastHttpContent;
import io.netty.handler.codec.http.QueryStringDecoder;
import io.netty.handler.timeout.IdleStateEvent;
import io.netty.handler.timeout.IdleStateHandler;
import io.netty.util.Attribute;
import io.netty.util.AttributeKey;
import io.netty.util.ReferenceCountUtil;
import io.netty.util.concurrent.ScheduledFuture;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.Future;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

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

    private static final Logger log = LoggerFactory.getLogger(WebhookServer.class);
    private static final AttributeKey<ScheduledFuture<?>> REQUEST_TIMER = AttributeKey.valueOf("satoken.request-timer");
    /** The claim of the request whose body is being received; the review handler takes it over. */
    private static final AttributeKey<BodyBudget.Reservation> RESERVATION = AttributeKey.valueOf("satoken.body-claim");

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
                                .addLast("request-started", new RequestDeadline(REQUEST_TIMER, true))
                                .addLast("http", new HttpServerCodec())
                                .addLast("request-received", new RequestDeadline(REQUEST_TIMER, false))
                                .addLast("body-budget", new BodyClaim())
                                .addLast("aggregate", new BodyLimit(limits.maxBodyBytes()))
                                .addLast("review", new ReviewHandler());
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

    /**
     * Step 2: closes a connection whose request does not arrive whole in time, headers included, and idle
     * connections. It sits twice in the pipeline: before the HTTP decoder, where the first bytes of a request
     * start the clock, and after it, where the request's last part stops it.
     */
    private final class RequestDeadline extends ChannelDuplexHandler {
        private final AttributeKey<ScheduledFuture<?>> timerKey;
        private final boolean starts;

        RequestDeadline(AttributeKey<ScheduledFuture<?>> timerKey, boolean starts) {
            this.timerKey = timerKey;
            this.starts = starts;
        }

        @Override
        public void channelRead(ChannelHandlerContext ctx, Object message) throws Exception {
            Attribute<ScheduledFuture<?>> timer = ctx.channel().attr(timerKey);
            if (starts && timer.get() == null) {
                timer.set(ctx.executor().schedule(() -> {
                    metrics.answered("other", "timeout", limits.requestTimeout());
                    respond(ctx, HttpResponseStatus.REQUEST_TIMEOUT, null, Verdict.invalid(
                            "the request did not arrive within " + limits.requestTimeout().toSeconds() + "s"), false);
                }, limits.requestTimeout().toMillis(), TimeUnit.MILLISECONDS));
            }
            if (!starts && message instanceof LastHttpContent) {
                ScheduledFuture<?> running = timer.getAndSet(null);
                if (running != null) {
                    running.cancel(false);
                }
            }
            super.channelRead(ctx, message);
        }

        @Override
        public void userEventTriggered(ChannelHandlerContext ctx, Object event) throws Exception {
            if (event instanceof IdleStateEvent) {
                ctx.close();
                return;
            }
            super.userEventTriggered(ctx, event);
        }

        @Override
        public void channelInactive(ChannelHandlerContext ctx) throws Exception {
            ScheduledFuture<?> running = ctx.channel().attr(timerKey).getAndSet(null);
            if (running != null) {
                running.cancel(false);
            }
            super.channelInactive(ctx);
        }

        @Override
        public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
            // TLS handshake failures, resets and malformed HTTP end the connection; none is worth a stack trace
            log.debug("webhook connection from {} closed: {}", ctx.channel().remoteAddress(), cause.toString());
            ctx.close();
        }
    }

    /**
     * Step 2: claims each body's announced length (the most a body of unknown length may grow to) from the
     * budget when its headers arrive; a request that does not fit is answered 503 and its body dropped as it
     * arrives, so it costs no memory. The claim goes with the request to the review handler, which gives it
     * back once the request is answered; a connection that closes first gives it back here.
     */
    private final class BodyClaim extends ChannelInboundHandlerAdapter {
        private boolean dropping;

        @Override
        public void channelRead(ChannelHandlerContext ctx, Object message) throws Exception {
            if (message instanceof HttpRequest request) {
                long length = HttpUtil.getContentLength(request, -1L);
                if (length > limits.maxBodyBytes()) {
                    super.channelRead(ctx, message); // the aggregator answers 413 before reading any of it
                    return;
                }
                BodyBudget.Reservation claim = budget.tryReserve(length < 0 ? limits.maxBodyBytes() : length);
                if (claim == null) {
                    dropping = !(message instanceof LastHttpContent);
                    ReferenceCountUtil.release(message);
                    metrics.answered("other", "overloaded", Duration.ZERO);
                    respond(ctx, HttpResponseStatus.SERVICE_UNAVAILABLE, null, Verdict.unavailable(
                            "request bodies fill the webhook's budget of " + budget.limit() + " bytes ("
                                    + budget.held() + " held); this one ("
                                    + (length < 0 ? "length not given" : length + " bytes") + ") was refused unread"),
                            HttpUtil.isKeepAlive(request));
                    return;
                }
                BodyBudget.Reservation previous = ctx.channel().attr(RESERVATION).getAndSet(claim);
                if (previous != null) {
                    previous.release();
                }
            } else if (dropping && message instanceof HttpContent content) {
                dropping = !(content instanceof LastHttpContent);
                content.release();
                return;
            }
            super.channelRead(ctx, message);
        }

        @Override
        public void channelInactive(ChannelHandlerContext ctx) throws Exception {
            takeClaim(ctx).release();
            super.channelInactive(ctx);
        }
    }

    private static BodyBudget.Reservation takeClaim(ChannelHandlerContext ctx) {
        BodyBudget.Reservation claim = ctx.channel().attr(RESERVATION).getAndSet(null);
        return claim == null ? BodyBudget.Reservation.NONE : claim;
    }

    /** Step 2: the body limit, answered as a denied review. */
    private final class BodyLimit extends HttpObjectAggregator {
        BodyLimit(int maxBodyBytes) {
            super(maxBodyBytes);
        }

        @Override
        protected void handleOversizedMessage(ChannelHandlerContext ctx, HttpMessage oversized) {
            takeClaim(ctx).release(); // a body without Content-Length that grew past the limit
            metrics.answered("other", "invalid", Duration.ZERO);
            // the rest of the body is read and dropped (within the request deadline), so the client, still
            // sending, can read the answer instead of seeing a reset
            respond(ctx, HttpResponseStatus.REQUEST_ENTITY_TOO_LARGE, null, Verdict.invalid(
                    "the request body exceeds " + limits.maxBodyBytes() + " bytes"), HttpUtil.isKeepAlive(oversized));
        }
    }

    /** Steps 3–5. */
    private final class ReviewHandler extends SimpleChannelInboundHandler<FullHttpRequest> {

        @Override
        protected void channelRead0(ChannelHandlerContext ctx, FullHttpRequest request) {
            BodyBudget.Reservation claim = takeClaim(ctx);
            try {
                review(ctx, request, claim);
            } catch (RuntimeException e) {
                claim.release();
                throw e;
            }
        }

        /** Answers {@code request}, giving {@code claim} back when it has. */
        private void review(ChannelHandlerContext ctx, FullHttpRequest request, BodyBudget.Reservation claim) {
            long started = System.nanoTime();
            boolean keepAlive = HttpUtil.isKeepAlive(request);
            String path = new QueryStringDecoder(request.uri()).path();
            Admission admission = routes.get(path);
            if (admission == null) {
                claim.release();
                metrics.answered("other", "invalid", Duration.ZERO);
                respondPlain(ctx, HttpResponseStatus.NOT_FOUND, "no webhook at " + path + "; serving "
                        + String.join(", ", routes.keySet().stream().sorted().toList()), keepAlive);
                return;
            }
            if (!HttpMethod.POST.equals(request.method())) {
                claim.release();
                metrics.answered(path, "invalid", Duration.ZERO);
                respondPlain(ctx, HttpResponseStatus.METHOD_NOT_ALLOWED, "use POST", keepAlive);
                return;
            }
            String contentType = request.headers().get(HttpHeaderNames.CONTENT_TYPE, "");
            if (!contentType.toLowerCase(java.util.Locale.ROOT).startsWith("application/json")) {
                claim.release();
                metrics.answered(path, "invalid", Duration.ZERO);
                respond(ctx, HttpResponseStatus.UNSUPPORTED_MEDIA_TYPE, null, Verdict.invalid(
                        "Content-Type must be application/json, got \"" + contentType + "\""), keepAlive);
                return;
            }
            byte[] body = ByteBufUtil.getBytes(request.content());
            AtomicBoolean answered = new AtomicBoolean();
            // the review usually answers within a millisecond; its deadline timer is dropped then, not kept for seconds
            AtomicReference<ScheduledFuture<?>> timer = new AtomicReference<>();
            String[] uid = new String[1];
            Future<?> review;
            try {
                review = reviewers.submit(() -> {
                    Verdict verdict;
                    String result;
                    try {
                        AdmissionRequest parsed = AdmissionReviews.read(body, uid);
                        verdict = admission.review(parsed);
                        result = verdict instanceof Verdict.Denied ? "denied"
                                : verdict instanceof Verdict.Patched ? "patched" : "allowed";
                    } catch (InvalidReviewException e) {
                        verdict = Verdict.invalid(e.getMessage());
                        result = "invalid";
                    } catch (InterruptedException e) {
                        return; // the deadline answered already
                    } catch (RuntimeException e) {
                        log.error("webhook {}: review failed", path, e);
                        verdict = Verdict.unavailable("the webhook failed to review the request: " + e);
                        result = "error";
                    }
                    if (answered.compareAndSet(false, true)) {
                        claim.release();
                        metrics.answered(path, result, Duration.ofNanos(System.nanoTime() - started));
                        Verdict answer = verdict;
                        ctx.executor().execute(() -> respond(ctx, HttpResponseStatus.OK, uid[0], answer, keepAlive));
                        ScheduledFuture<?> deadline = timer.getAndSet(null);
                        if (deadline != null) {
                            deadline.cancel(false);
                        }
                    }
                });
            } catch (RejectedExecutionException e) {
                claim.release();
                metrics.answered(path, "overloaded", Duration.ZERO);
                respond(ctx, HttpResponseStatus.SERVICE_UNAVAILABLE, null,
                        Verdict.unavailable("the webhook is overloaded; " + limits.queue() + " reviews are waiting"),
                        keepAlive);
                return;
            }
            ScheduledFuture<?> deadline = ctx.executor().schedule(() -> {
                if (answered.compareAndSet(false, true)) {
                    // a review still queued is dropped with its body (FutureTask lets go of it on cancel)
                    review.cancel(true);
                    reviewers.remove((Runnable) review);
                    claim.release();
                    metrics.answered(path, "timeout", limits.reviewTimeout());
                    respond(ctx, HttpResponseStatus.OK, uid[0], Verdict.unavailable("the webhook did not decide within "
                            + limits.reviewTimeout().toMillis() + "ms"), keepAlive);
                }
            }, limits.reviewTimeout().toMillis(), TimeUnit.MILLISECONDS);
            timer.set(deadline);
            if (answered.get()) {
                deadline.cancel(false);
            }
        }

        @Override
        public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
            log.debug("webhook connection from {} closed: {}", ctx.channel().remoteAddress(), cause.toString());
            ctx.close();
        }
    }

    private static void respond(ChannelHandlerContext ctx, HttpResponseStatus status, String uid, Verdict verdict,
            boolean keepAlive) {
        write(ctx, status, AdmissionReviews.write(uid, verdict), HttpHeaderValues.APPLICATION_JSON, keepAlive);
    }

    private static void respondPlain(ChannelHandlerContext ctx, HttpResponseStatus status, String text,
            boolean keepAlive) {
        write(ctx, status, (text + "\n").getBytes(java.nio.charset.StandardCharsets.UTF_8),
                HttpHeaderValues.TEXT_PLAIN, keepAlive);
    }

    private static void write(ChannelHandlerContext ctx, HttpResponseStatus status, byte[] body, CharSequence type,
            boolean keepAlive) {
        if (!ctx.channel().isActive()) {
            return;
        }
        FullHttpResponse response = new DefaultFullHttpResponse(HttpVersion.HTTP_1_1, status,
                Unpooled.wrappedBuffer(body));
        response.headers().set(HttpHeaderNames.CONTENT_TYPE, type);
        response.headers().setInt(HttpHeaderNames.CONTENT_LENGTH, body.length);
        // from the channel, not the context: the deadline timer's context sits before the HTTP encoder
        if (keepAlive) {
            response.headers().set(HttpHeaderNames.CONNECTION, HttpHeaderValues.KEEP_ALIVE);
            ctx.channel().writeAndFlush(response);
        } else {
            response.headers().set(HttpHeaderNames.CONNECTION, HttpHeaderValues.CLOSE);
            ctx.channel().writeAndFlush(response).addListener(ChannelFutureListener.CLOSE);
        }
    }
}
