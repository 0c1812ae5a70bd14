package io.satoken.controlplane.runtime;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.sun.net.httpserver.HttpServer;
import io.kubernetes.client.openapi.ApiClient;
import io.satoken.common.kube.RateLimiter;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;
import okhttp3.Request;
import okhttp3.Response;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** {@code --kube-api-qps}/{@code --kube-api-burst}: a limited client sends its burst, then nothing without a slot. */
class ClientRateLimitTest {

    private HttpServer server;
    private final AtomicInteger received = new AtomicInteger();

    @BeforeEach
    void serve() throws IOException {
        server = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0);
        server.createContext("/", exchange -> {
            received.incrementAndGet();
            exchange.sendResponseHeaders(200, -1);
            exchange.close();
        });
        server.start();
    }

    @AfterEach
    void stop() {
        server.stop(0);
    }

    private Response get(ApiClient client) throws IOException {
        return client.getHttpClient().newCall(new Request.Builder()
                .url(client.getBasePath() + "/api/v1/namespaces").build()).execute();
    }

    @Test
    void afterTheBurst_aRequestWithoutASlotFailsBeforeItIsSent() throws IOException {
        ApiClient client = new ApiClient().setBasePath("http://127.0.0.1:" + server.getAddress().getPort());
        // one slot per ~17 minutes and no waiting: the burst is all this test can use
        ClientRateLimit.apply(client, new RateLimiter(0.001, 3, Duration.ZERO));

        for (int i = 0; i < 3; i++) {
            try (Response response = get(client)) {
                assertThat(response.code()).isEqualTo(200);
            }
        }
        assertThatThrownBy(() -> get(client).close()).isInstanceOf(IOException.class)
                .hasMessageContaining("client-side rate limit").hasMessageContaining("--kube-api-qps");
        assertThat(received).hasValue(3);
    }

    @Test
    void anUnlimitedClientOfTheSameServerIsNotHeldBack() throws IOException {
        int port = server.getAddress().getPort();
        ApiClient limited = new ApiClient().setBasePath("http://127.0.0.1:" + port);
        ApiClient service = new ApiClient().setBasePath("http://127.0.0.1:" + port);
        ClientRateLimit.apply(limited, new RateLimiter(0.001, 1, Duration.ZERO));
        get(limited).close();

        for (int i = 0; i < 5; i++) { // the Lease's and the webhook's client, as ControlplaneRuntime keeps it
            try (Response response = get(service)) {
                assertThat(response.code()).isEqualTo(200);
            }
        }
        assertThat(received).hasValue(6);
    }
}
