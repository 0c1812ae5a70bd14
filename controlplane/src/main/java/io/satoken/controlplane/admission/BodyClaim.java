package io.satoken.controlplane.admission;

import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.handler.codec.http.HttpContent;
import io.netty.handler.codec.http.HttpRequest;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpUtil;
import io.netty.handler.codec.http.LastHttpContent;
import io.netty.util.AttributeKey;
import io.netty.util.ReferenceCountUtil;
import java.time.Duration;

/**
 * {@link WebhookServer}'s step 2: claims each body's announced length (the most a body of unknown length may grow
 * to) from the budget when its headers arrive; a request that does not fit is answered 503 and its body dropped as
 * it arrives, so it costs no memory. The claim goes with the request to the review handler, which gives it back
 * once the request is answered ({@link #take}); a connection that closes first gives it back here.
 */
final class BodyClaim extends ChannelInboundHandlerAdapter {

    /** The claim of the request whose body is being received; the review handler takes it over. */
    private static final AttributeKey<BodyBudget.Reservation> RESERVATION = AttributeKey.valueOf("satoken.body-claim");

    private final BodyBudget budget;
    private final int maxBodyBytes;
    private final WebhookMetrics metrics;
    private boolean dropping;

    BodyClaim(BodyBudget budget, int maxBodyBytes, WebhookMetrics metrics) {
        this.budget = budget;
        this.maxBodyBytes = maxBodyBytes;
        this.metrics = metrics;
    }

    /** Takes the channel's claim over from this handler; {@code NONE} when there is none. */
    static BodyBudget.Reservation take(ChannelHandlerContext ctx) {
        BodyBudget.Reservation claim = ctx.channel().attr(RESERVATION).getAndSet(null);
        return claim == null ? BodyBudget.Reservation.NONE : claim;
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object message) throws Exception {
        if (message instanceof HttpRequest request) {
            long length = HttpUtil.getContentLength(request, -1L);
            if (length > maxBodyBytes) {
                super.channelRead(ctx, message); // the aggregator answers 413 before reading any of it
                return;
            }
            BodyBudget.Reservation claim = budget.tryReserve(length < 0 ? maxBodyBytes : length);
            if (claim == null) {
                dropping = !(message instanceof LastHttpContent);
                ReferenceCountUtil.release(message);
                metrics.answered("other", "overloaded", Duration.ZERO);
                WebhookResponses.review(ctx, HttpResponseStatus.SERVICE_UNAVAILABLE, null, Verdict.unavailable(
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
        take(ctx).release();
        super.channelInactive(ctx);
    }
}
