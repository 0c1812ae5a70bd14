package io.satoken.controlplane.https;

import io.netty.channel.Channel;
import io.netty.channel.ChannelDuplexHandler;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandler;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelPromise;
import io.netty.channel.group.ChannelGroup;
import io.netty.channel.group.DefaultChannelGroup;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaderValues;
import io.netty.handler.codec.http.HttpRequest;
import io.netty.handler.codec.http.HttpResponse;
import io.netty.handler.codec.http.LastHttpContent;
import io.netty.util.AttributeKey;
import io.netty.util.concurrent.GlobalEventExecutor;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * The requests a {@link WebhookServer} has received and not yet answered, and its open connections: what its
 * drain waits for, and what it may close at once. A request counts from its head's arrival until its answer has
 * been written (or its connection has closed). Once draining, every answer says {@code Connection: close} and
 * closes its connection, so a client that keeps connections open (the API server does) opens its next one to
 * another replica.
 */
@ChannelHandler.Sharable
final class InFlight extends ChannelDuplexHandler {

    private static final AttributeKey<Boolean> BUSY = AttributeKey.valueOf("satoken.webhook.busy");

    private final ChannelGroup connections = new DefaultChannelGroup(GlobalEventExecutor.INSTANCE);
    private final AtomicBoolean draining;
    private int requests;

    InFlight(AtomicBoolean draining) {
        this.draining = draining;
    }

    @Override
    public void channelActive(ChannelHandlerContext ctx) throws Exception {
        connections.add(ctx.channel()); // the group forgets a channel when it closes
        super.channelActive(ctx);
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) throws Exception {
        if (msg instanceof HttpRequest) {
            begin(ctx.channel());
        }
        super.channelRead(ctx, msg);
    }

    @Override
    public void write(ChannelHandlerContext ctx, Object msg, ChannelPromise promise) throws Exception {
        boolean closing = draining.get();
        if (closing && msg instanceof HttpResponse response) {
            response.headers().set(HttpHeaderNames.CONNECTION, HttpHeaderValues.CLOSE);
        }
        if (msg instanceof LastHttpContent) {
            Channel channel = ctx.channel();
            promise.addListener(f -> end(channel));
            if (closing) {
                promise.addListener(ChannelFutureListener.CLOSE);
            }
        }
        super.write(ctx, msg, promise);
    }

    @Override
    public void channelInactive(ChannelHandlerContext ctx) throws Exception {
        end(ctx.channel());
        super.channelInactive(ctx);
    }

    /** Requests received and not yet answered. */
    synchronized int requests() {
        return requests;
    }

    /** Closes every open connection that has no request in progress. */
    void closeIdle() {
        for (Channel channel : connections) {
            if (!Boolean.TRUE.equals(channel.attr(BUSY).get())) {
                channel.close();
            }
        }
    }

    /** Closes every open connection. */
    void closeAll() {
        connections.close();
    }

    /**
     * Waits until no request is in progress, for at most {@code limit}.
     *
     * @return true when none is; false when {@code limit} passed first
     */
    synchronized boolean awaitNone(Duration limit) throws InterruptedException {
        long deadline = System.nanoTime() + limit.toNanos();
        while (requests > 0) {
            long left = deadline - System.nanoTime();
            if (left <= 0) {
                return false;
            }
            wait(Math.max(1, left / 1_000_000));
        }
        return true;
    }

    private void begin(Channel channel) {
        if (!Boolean.TRUE.equals(channel.attr(BUSY).getAndSet(Boolean.TRUE))) {
            synchronized (this) {
                requests++;
            }
        }
    }

    private void end(Channel channel) {
        if (Boolean.TRUE.equals(channel.attr(BUSY).getAndSet(Boolean.FALSE))) {
            synchronized (this) {
                requests--;
                if (requests == 0) {
                    notifyAll();
                }
            }
        }
    }
}
