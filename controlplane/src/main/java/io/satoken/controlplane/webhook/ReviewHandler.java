package io.satoken.controlplane.webhook;

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
import io.satoken.controlplane.admission.Admission;
import io.satoken.controlplane.admission.AdmissionRequest;
import io.satoken.controlplane.admission.Verdict;
import io.satoken.controlplane.admission.view.InvalidReviewException;
import java.time.Duration;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.Future;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * {@link WebhookServer}'s steps 3–5: a whole request is checked (path, method, content type), then reviewed on the
 * worker pool within the review deadline; whichever of the review and the deadline comes first answers.
 */
final class ReviewHandler extends SimpleChannelInboundHandler<FullHttpRequest> {

    private static final Logger log = LoggerFactory.getLogger(WebhookServer.class); // logged as the server's

    private final Map<String, Admission> routes;
    private final ThreadPoolExecutor reviewers;
    private final WebhookServer.Limits limits;
    private final WebhookMetrics metrics;

    ReviewHandler(Map<String, Admission> routes, ThreadPoolExecutor reviewers, WebhookServer.Limits limits,
            WebhookMetrics metrics) {
        this.routes = routes;
        this.reviewers = reviewers;
        this.limits = limits;
        this.metrics = metrics;
    }

    @Override
    protected void channelRead0(ChannelHandlerContext ctx, FullHttpRequest request) {
        BodyBudget.Reservation claim = BodyClaim.take(ctx);
        try {
            review(ctx, request, claim);
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
    private void review(ChannelHandlerContext ctx, FullHttpRequest request, BodyBudget.Reservation claim) {
        long started = System.nanoTime();
        boolean keepAlive = HttpUtil.isKeepAlive(request);
        String path = new QueryStringDecoder(request.uri()).path();
        Admission admission = routes.get(path);
        if (admission == null) {
            claim.release();
            metrics.answered(WebhookMetrics.OTHER, "invalid", Duration.ZERO);
            WebhookResponses.plain(ctx, HttpResponseStatus.NOT_FOUND, "no webhook at " + path + "; serving "
                    + String.join(", ", routes.keySet().stream().sorted().toList()), keepAlive);
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
            WebhookResponses.review(ctx, HttpResponseStatus.UNSUPPORTED_MEDIA_TYPE, null, Verdict.invalid(
                    "Content-Type must be application/json, got \"" + contentType + "\""), keepAlive);
            return;
        }
        dispatch(ctx, path, admission, ByteBufUtil.getBytes(request.content()), claim, keepAlive, started);
    }

    /** Step 4 and 5: the review on the worker pool, raced against its deadline on the connection's thread. */
    private void dispatch(ChannelHandlerContext ctx, String path, Admission admission, byte[] body,
            BodyBudget.Reservation claim, boolean keepAlive, long started) {
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
                    // what the parse keeps is claimed beside the body, in the name of the same client
                    AdmissionRequest parsed = AdmissionReviews.read(body, uid, claim::grow);
                    verdict = admission.review(parsed);
                    result = verdict instanceof Verdict.Denied ? "denied"
                            : verdict instanceof Verdict.Patched ? "patched" : "allowed";
                } catch (InvalidReviewException e) {
                    verdict = Verdict.invalid(e.getMessage());
                    result = "invalid";
                } catch (ReviewOverloadException e) {
                    verdict = Verdict.unavailable(e.getMessage());
                    result = "overloaded";
                } catch (InterruptedException e) {
                    return; // the deadline answered already
                } catch (RuntimeException e) {
                    log.error("webhook {}: review failed", path, e);
                    verdict = Verdict.unavailable("the webhook failed to review the request: " + Failures.inWords(e));
                    result = "error";
                }
                if (answered.compareAndSet(false, true)) {
                    claim.release();
                    metrics.answered(path, result, Duration.ofNanos(System.nanoTime() - started));
                    Verdict answer = verdict;
                    ctx.executor().execute(() -> WebhookResponses.review(ctx, HttpResponseStatus.OK, uid[0], answer,
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
            WebhookResponses.review(ctx, HttpResponseStatus.SERVICE_UNAVAILABLE, null,
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
                WebhookResponses.review(ctx, HttpResponseStatus.OK, uid[0], Verdict.unavailable(
                        "the webhook did not decide within " + limits.reviewTimeout().toMillis() + "ms"), keepAlive);
            }
        }, limits.reviewTimeout().toMillis(), TimeUnit.MILLISECONDS);
        timer.set(deadline);
        if (answered.get()) {
            deadline.cancel(false);
        }
    }
}
