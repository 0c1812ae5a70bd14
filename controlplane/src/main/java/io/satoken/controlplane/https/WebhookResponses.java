package io.satoken.controlplane.https;

import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.handler.codec.http.DefaultFullHttpResponse;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaderValues;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpVersion;
import java.nio.charset.StandardCharsets;

/** Writes the webhook's HTTP answers: a JSON body from the {@link Endpoint}, or a line of text for a 404 or 405. */
final class WebhookResponses {

    private WebhookResponses() {
    }

    /** Answers with {@code body}, the endpoint's JSON. */
    static void json(ChannelHandlerContext ctx, HttpResponseStatus status, byte[] body, boolean keepAlive) {
        write(ctx, status, body, HttpHeaderValues.APPLICATION_JSON, keepAlive);
    }

    /** Answers with the endpoint's body for a refusal with {@code status}, saying {@code message}. */
    static void refusal(ChannelHandlerContext ctx, Endpoint endpoint, HttpResponseStatus status, String message,
            boolean keepAlive) {
        json(ctx, status, endpoint.refusal(status.code(), message), keepAlive);
    }

    /** Answers with {@code text} as one line of plain text. */
    static void plain(ChannelHandlerContext ctx, HttpResponseStatus status, String text, boolean keepAlive) {
        write(ctx, status, (text + "\n").getBytes(StandardCharsets.UTF_8), HttpHeaderValues.TEXT_PLAIN, keepAlive);
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
