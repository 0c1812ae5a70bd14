package io.satoken.controlplane.webhook;

import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.handler.codec.http.DefaultFullHttpResponse;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaderValues;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpVersion;
import io.satoken.controlplane.admission.Verdict;
import java.nio.charset.StandardCharsets;

/** Writes the webhook's HTTP answers: an AdmissionReview for a verdict, or a line of text for a 404 or 405. */
final class WebhookResponses {

    private WebhookResponses() {
    }

    /** Answers with the response review of {@code verdict} for {@code uid} (null when the request never said it). */
    static void review(ChannelHandlerContext ctx, HttpResponseStatus status, String uid, Verdict verdict,
            boolean keepAlive) {
        write(ctx, status, AdmissionReviews.write(uid, verdict), HttpHeaderValues.APPLICATION_JSON, keepAlive);
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
