package io.satoken.controlplane.https;

import io.netty.channel.ChannelHandlerContext;
import io.netty.handler.codec.http.HttpMessage;
import io.netty.handler.codec.http.HttpObjectAggregator;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpUtil;
import java.time.Duration;

/** {@link WebhookServer}'s step 2: the body limit, answered with the {@link Endpoint}'s refusal. */
final class BodyLimit extends HttpObjectAggregator {

    private final int maxBodyBytes;
    private final WebhookMetrics metrics;
    private final Endpoint endpoint;

    BodyLimit(int maxBodyBytes, WebhookMetrics metrics, Endpoint endpoint) {
        super(maxBodyBytes);
        this.maxBodyBytes = maxBodyBytes;
        this.metrics = metrics;
        this.endpoint = endpoint;
    }

    @Override
    protected void handleOversizedMessage(ChannelHandlerContext ctx, HttpMessage oversized) {
        BodyClaim.take(ctx).release(); // a body without Content-Length that grew past the limit
        metrics.answered("other", "invalid", Duration.ZERO);
        // the rest of the body is read and dropped (within the request deadline), so the client, still
        // sending, can read the answer instead of seeing a reset
        WebhookResponses.refusal(ctx, endpoint, HttpResponseStatus.REQUEST_ENTITY_TOO_LARGE,
                "the request body exceeds " + maxBodyBytes + " bytes", HttpUtil.isKeepAlive(oversized));
    }
}
