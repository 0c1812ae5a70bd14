package io.satoken.controlplane.runtime;

import io.kubernetes.client.openapi.ApiClient;
import io.satoken.common.kube.RateLimiter;
import java.io.IOException;
import java.io.InterruptedIOException;
import okhttp3.Interceptor;
import okhttp3.Response;

/**
 * {@code --kube-api-qps}/{@code --kube-api-burst}: every request a client sends first takes a slot from one
 * {@link RateLimiter}, as client-go's REST client does for kube-controller-manager's controllers. A watch takes
 * one slot when it starts, like any request. A request that would wait longer than the limiter's
 * {@link RateLimiter#maxWait()} fails at once with an {@link IOException} saying so; the controller that made it
 * retries with its own backoff.
 */
public final class ClientRateLimit implements Interceptor {

    private final RateLimiter limiter;

    private ClientRateLimit(RateLimiter limiter) {
        this.limiter = limiter;
    }

    /** Makes every later request of {@code client} take a slot from {@code limiter} first. */
    public static void apply(ApiClient client, RateLimiter limiter) {
        client.setHttpClient(client.getHttpClient().newBuilder().addInterceptor(new ClientRateLimit(limiter)).build());
    }

    @Override
    public Response intercept(Chain chain) throws IOException {
        boolean got;
        try {
            got = limiter.acquire();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new InterruptedIOException("interrupted while waiting for the client-side rate limit");
        }
        if (!got) {
            throw new IOException("client-side rate limit (" + limiter + ", --kube-api-qps/--kube-api-burst): no "
                    + "request slot within " + limiter.maxWait().toSeconds() + "s");
        }
        return chain.proceed(chain.request());
    }
}
