package io.satoken.controlplane.https;

import io.netty.channel.Channel;
import io.netty.channel.ChannelDuplexHandler;
import io.netty.channel.ChannelHandlerContext;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.LastHttpContent;
import io.netty.handler.timeout.IdleStateEvent;
import io.netty.util.Attribute;
import io.netty.util.AttributeKey;
import io.netty.util.concurrent.ScheduledFuture;
import io.satoken.common.kube.Failures;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * {@link WebhookServer}'s step 2: closes a connection whose request does not arrive whole in time, headers included,
 * and idle connections. It sits twice in the pipeline: before the HTTP decoder, where the first bytes of a request
 * start the clock ({@link #starting}), and after it, where the request's last part stops it ({@link #stopping}).
 */
final class RequestDeadline extends ChannelDuplexHandler {

    private static final Logger log = LoggerFactory.getLogger(WebhookServer.class); // logged as the server's
    private static final AttributeKey<ScheduledFuture<?>> TIMER = AttributeKey.valueOf("satoken.request-timer");

    private final boolean starts;
    private final Duration requestTimeout;
    private final WebhookMetrics metrics;
    /** What says the 408; null in the handler that stops the clock, which never answers. */
    private final Endpoint endpoint;

    private RequestDeadline(boolean starts, Duration requestTimeout, WebhookMetrics metrics, Endpoint endpoint) {
        this.starts = starts;
        this.requestTimeout = requestTimeout;
        this.metrics = metrics;
        this.endpoint = endpoint;
    }

    /** The handler before the HTTP decoder, which starts the clock and answers 408 when it runs out. */
    static RequestDeadline starting(Duration requestTimeout, WebhookMetrics metrics, Endpoint endpoint) {
        return new RequestDeadline(true, requestTimeout, metrics, endpoint);
    }

    /** The handler after the HTTP decoder, which stops the clock. */
    static RequestDeadline stopping(Duration requestTimeout, WebhookMetrics metrics) {
        return new RequestDeadline(false, requestTimeout, metrics, null);
    }

    /** Stops the clock of {@code channel}'s request, which has been answered some other way. */
    static void cancel(Channel channel) {
        ScheduledFuture<?> running = channel.attr(TIMER).getAndSet(null);
        if (running != null) {
            running.cancel(false);
        }
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object message) throws Exception {
        Attribute<ScheduledFuture<?>> timer = ctx.channel().attr(TIMER);
        if (starts && timer.get() == null) {
            timer.set(ctx.executor().schedule(() -> {
                metrics.answered("other", "timeout", requestTimeout);
                WebhookResponses.refusal(ctx, endpoint, HttpResponseStatus.REQUEST_TIMEOUT,
                        "the request did not arrive within " + requestTimeout.toSeconds() + "s", false);
            }, requestTimeout.toMillis(), TimeUnit.MILLISECONDS));
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
        cancel(ctx.channel());
        super.channelInactive(ctx);
    }

    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
        // TLS handshake failures, resets and malformed HTTP end the connection; none is worth a stack trace
        log.debug("webhook connection from {} closed: {}", ctx.channel().remoteAddress(),
                Failures.inWords(cause));
        ctx.close();
    }
}
