package io.satoken.controlplane.https;

import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.handler.codec.http.HttpContent;
import io.netty.handler.codec.http.HttpRequest;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpUtil;
import io.netty.handler.codec.http.LastHttpContent;
import io.netty.util.AttributeKey;
import io.netty.util.ReferenceCountUtil;
import io.netty.util.concurrent.ScheduledFuture;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.function.LongSupplier;

/**
 * {@link WebhookServer}'s step 2: claims each body's announced length (the most a body of unknown length may grow
 * to) from the budget, in the name of the connection's {@link Client}, when its headers arrive; a request that does
 * not fit, in the whole budget or in its client's share, is answered 503 and its body dropped as it arrives, so it
 * costs no memory. While the body arrives it must keep the {@link BodyPace}, checked every {@code tick}; one that
 * falls behind is answered 408, its claim given back and its connection closed. The claim goes with the request to
 * the review handler, which gives it back once the request is answered ({@link #take}); a connection that closes
 * first gives it back here.
 */
final class BodyClaim extends ChannelInboundHandlerAdapter {

    /** The claim of the request whose body is being received; the review handler takes it over. */
    private static final AttributeKey<BodyBudget.Reservation> RESERVATION = AttributeKey.valueOf("satoken.body-claim");

    private final BodyBudget budget;
    private final int maxBodyBytes;
    private final BodyPace pace;
    private final Duration tick;
    private final LongSupplier nanoTime;
    private final WebhookMetrics metrics;
    private final Endpoint endpoint;
    private boolean dropping;
    /** The body arriving under a claim: its claimed bytes, those received, when its headers came, its pace check. */
    private long claimed;
    private long received;
    private long startedNanos;
    private ScheduledFuture<?> paceCheck;

    /**
     * @param pace the pace an arriving body must keep, or null for none
     * @param tick how often an arriving body's pace is checked
     * @param nanoTime the clock the pace is measured by ({@link System#nanoTime})
     * @param endpoint what says the 503s and 408s
     */
    BodyClaim(BodyBudget budget, int maxBodyBytes, BodyPace pace, Duration tick, LongSupplier nanoTime,
            WebhookMetrics metrics, Endpoint endpoint) {
        this.budget = budget;
        this.maxBodyBytes = maxBodyBytes;
        this.pace = pace;
        this.tick = tick;
        this.nanoTime = nanoTime;
        this.metrics = metrics;
        this.endpoint = endpoint;
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
            if (length < 0 && !HttpUtil.isTransferEncodingChunked(request)) {
                length = 0; // neither a length nor chunks: HTTP/1.1 says there is no body
            }
            if (length > maxBodyBytes) {
                super.channelRead(ctx, message); // the aggregator answers 413 before reading any of it
                return;
            }
            long claim = length < 0 ? maxBodyBytes : length;
            String client = Client.of(ctx.channel());
            BodyBudget.Reservation reservation = budget.tryReserve(client, claim);
            if (reservation == null) {
                dropping = !(message instanceof LastHttpContent);
                ReferenceCountUtil.release(message);
                metrics.answered("other", "overloaded", Duration.ZERO);
                WebhookResponses.refusal(ctx, endpoint, HttpResponseStatus.SERVICE_UNAVAILABLE,
                        refused(client, claim, length), HttpUtil.isKeepAlive(request));
                return;
            }
            BodyBudget.Reservation previous = ctx.channel().attr(RESERVATION).getAndSet(reservation);
            if (previous != null) {
                previous.release();
            }
            if (pace != null && claim > 0 && !(message instanceof LastHttpContent)) {
                watch(ctx, claim);
            }
        } else if (dropping && message instanceof HttpContent content) {
            dropping = !(content instanceof LastHttpContent);
            content.release();
            return;
        } else if (message instanceof HttpContent content && paceCheck != null) {
            received += content.content().readableBytes();
            if (content instanceof LastHttpContent) {
                unwatch();
            }
        }
        super.channelRead(ctx, message);
    }

    /** Starts checking the pace of a body claiming {@code bytes}; the first check comes when the grace ends. */
    private void watch(ChannelHandlerContext ctx, long bytes) {
        unwatch();
        claimed = bytes;
        received = 0;
        startedNanos = nanoTime.getAsLong();
        paceCheck = ctx.executor().scheduleAtFixedRate(() -> checkPace(ctx),
                pace.grace().toNanos(), tick.toNanos(), TimeUnit.NANOSECONDS);
    }

    private void unwatch() {
        if (paceCheck != null) {
            paceCheck.cancel(false);
            paceCheck = null;
        }
    }

    /** Cuts the body if it is behind its pace: 408, the claim given back, the connection closed. */
    private void checkPace(ChannelHandlerContext ctx) {
        if (ctx.channel().attr(RESERVATION).get() == null) {
            unwatch(); // answered already: 413 for a body that grew past the limit
            return;
        }
        Duration elapsed = Duration.ofNanos(nanoTime.getAsLong() - startedNanos);
        if (paceCheck == null || !pace.behind(claimed, received, elapsed)) {
            return;
        }
        unwatch();
        take(ctx).release();
        RequestDeadline.cancel(ctx.channel()); // this answer is the request's one
        metrics.answered(WebhookMetrics.OTHER, "timeout", elapsed);
        WebhookResponses.refusal(ctx, endpoint, HttpResponseStatus.REQUEST_TIMEOUT,
                pace.message(claimed, received, elapsed), false);
    }

    /** Why a claim of {@code claim} bytes did not fit; {@code length} is the announced one, -1 when none was. */
    private String refused(String client, long claim, long length) {
        String self = "this one (" + (length < 0 ? "length not given" : length + " bytes") + ") was refused unread";
        if (budget.refusal(client, claim) == BodyBudget.Refusal.CLIENT_SHARE) {
            return "request bodies from " + client + " fill its share of the webhook's budget, " + budget.clientLimit()
                    + " bytes (" + budget.heldBy(client) + " held); " + self;
        }
        return "request bodies fill the webhook's budget of " + budget.limit() + " bytes (" + budget.held()
                + " held); " + self;
    }

    @Override
    public void channelInactive(ChannelHandlerContext ctx) throws Exception {
        unwatch();
        take(ctx).release();
        super.channelInactive(ctx);
    }
}
