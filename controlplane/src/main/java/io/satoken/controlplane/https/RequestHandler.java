package io.satoken.controlplane.https;

import io.netty.buffer.ByteBufUtil;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.SimpleChannelInboundHandler;
import io.netty.handler.codec.http.FullHttpRequest;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpUtil;
import io.netty.handler.codec.http.QueryStringDecoder;
import io.netty.util.concurrent.ScheduledFuture;
import io.satoken.common.kube.Failures;
import java.time.Duration;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.concurrent.Future;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * {@link WebhookServer}'s steps 3–5: a whole request is checked (path, method, content type), then answered by the
 * {@link Endpoint} on the worker pool within the review deadline; whichever of the answer and the deadline comes
 * first is sent.
 */
final class RequestHandler extends SimpleChannelInboundHandler<FullHttpRequest> {

    private static final Logger log = LoggerFactory.getLogger(WebhookServer.class); // logged as the server's

    private final Endpoint endpoint;
    private final Set<String> paths;
    /** The paths, sorted, for the 404's text. */
    private final List<String> served;
    private final ThreadPoolExecutor reviewers;
    private final WebhookServer.Limits limits;
    private final WebhookMetrics metrics;

    RequestHandler(Endpoint endpoint, ThreadPoolExecutor reviewers, WebhookServer.Limits limits,
            WebhookMetrics metrics) {
        this.endpoint = endpoint;
        this.paths = Set.copyOf(endpoint.paths());
        this.served = paths.stream().sorted().toList();
        this.reviewers = reviewers;
        this.limits = limits;
        this.metrics = metrics;
    }

    @Override
    protected void channelRead0(ChannelHandlerContext ctx, FullHttpRequest request) {
        BodyBudget.Reservation claim = BodyClaim.take(ctx);
        try {
            answer(ctx, request, claim);
        } catch (RuntimeException e) {
            claim.release();
            throw e;
        }
    }

    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
        log.debug("webhook connection from {} closed: {}", ctx.channel().remoteAddress(),
                Failures.inWords(cause));
        ctx.close();
    }

    /** Answers {@code request}, giving {@code claim} back when it has. */
    private void answer(ChannelHandlerContext ctx, FullHttpRequest request, BodyBudget.Reservation claim) {
        long started = System.nanoTime();
        boolean keepAlive = HttpUtil.isKeepAlive(request);
        String path = new QueryStringDecoder(request.uri()).path();
        if (!paths.contains(path)) {
            claim.release();
            metrics.answered(WebhookMetrics.OTHER, "invalid", Duration.ZERO);
            WebhookResponses.plain(ctx, HttpResponseStatus.NOT_FOUND, "no webhook at " + path + "; serving "
                    + String.join(", ", served), keepAlive);
            return;
        }
        if (!HttpMethod.POST.equals(request.method())) {
            claim.release();
            metrics.answered(path, "invalid", Duration.ZERO);
            WebhookResponses.plain(ctx, HttpResponseStatus.METHOD_NOT_ALLOWED, "use POST", keepAlive);
            return;
        }
        String contentType = request.headers().get(HttpHeaderNames.CONTENT_TYPE, "");
        if (!contentType.toLowerCase(Locale.ROOT).startsWith("application/json")) {
            claim.release();
            metrics.answered(path, "invalid", Duration.ZERO);
            WebhookResponses.refusal(ctx, endpoint, HttpResponseStatus.UNSUPPORTED_MEDIA_TYPE,
                    "Content-Type must be application/json, got \"" + contentType + "\"", keepAlive);
            return;
        }
        dispatch(ctx, path, ByteBufUtil.getBytes(request.content()), claim, keepAlive, started);
    }

    /** Step 4 and 5: the answer on the worker pool, raced against its deadline on the connection's thread. */
    private void dispatch(ChannelHandlerContext ctx, String path, byte[] body, BodyBudget.Reservation claim,
            boolean keepAlive, long started) {
        AtomicBoolean answered = new AtomicBoolean();
        // the answer usually comes within a millisecond; its deadline timer is dropped then, not kept for seconds
        AtomicReference<ScheduledFuture<?>> timer = new AtomicReference<>();
        // what answering keeps is claimed beside the body, in the name of the same client
        Endpoint.Exchange exchange = endpoint.exchange(path, body, claim::grow);
        Future<?> review;
        try {
            review = reviewers.submit(() -> {
                Endpoint.Answer answer;
                try {
                    answer = exchange.answer();
                } catch (InterruptedException e) {
                    return; // the deadline answered already
                }
                if (answered.compareAndSet(false, true)) {
                    claim.release();
                    metrics.answered(path, answer.result(), Duration.ofNanos(System.nanoTime() - started));
                    ctx.executor().execute(() -> WebhookResponses.json(ctx, HttpResponseStatus.OK, answer.body(),
                            keepAlive));
                    ScheduledFuture<?> deadline = timer.getAndSet(null);
                    if (deadline != null) {
                        deadline.cancel(false);
                    }
                }
            });
        } catch (RejectedExecutionException e) {
            claim.release();
            metrics.answered(path, "overloaded", Duration.ZERO);
            WebhookResponses.refusal(ctx, endpoint, HttpResponseStatus.SERVICE_UNAVAILABLE,
                    "the webhook is overloaded; " + limits.queue() + " reviews are waiting", keepAlive);
            return;
        }
        ScheduledFuture<?> deadline = ctx.executor().schedule(() -> {
            if (answered.compareAndSet(false, true)) {
                // a review still queued is dropped with its body (FutureTask lets go of it on cancel)
                review.cancel(true);
                reviewers.remove((Runnable) review);
                claim.release();
                metrics.answered(path, "timeout", limits.reviewTimeout());
                WebhookResponses.json(ctx, HttpResponseStatus.OK, exchange.late(
                        "the webhook did not decide within " + limits.reviewTimeout().toMillis() + "ms"), keepAlive);
            }
        }, limits.reviewTimeout().toMillis(), TimeUnit.MILLISECONDS);
        timer.set(deadline);
        if (answered.get()) {
            deadline.cancel(false);
        }
    }
}
