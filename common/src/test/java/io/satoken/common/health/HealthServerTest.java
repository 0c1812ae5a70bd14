package io.satoken.common.health;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

class HealthServerTest {
    private final PrometheusMeterRegistry registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
    private final AtomicBoolean synced = new AtomicBoolean(false);
    private final HttpClient http = HttpClient.newHttpClient();
    private HealthServer server;

    @BeforeEach
    void start() throws Exception {
        server = new HealthServer(new InetSocketAddress("127.0.0.1", 0), registry,
                List.of(new HealthServer.Check("ping", () -> true)),
                List.of(new HealthServer.Check("informer-synced", synced::get),
                        new HealthServer.Check("broken", () -> {
                            throw new IllegalStateException("boom");
                        })));
        server.start();
    }

    @AfterEach
    void stop() {
        server.close();
    }

    @Test
    void healthz_answersOkWhileChecksPass() throws Exception {
        HttpResponse<String> response = get("/healthz");
        assertThat(response.statusCode()).isEqualTo(200);
        assertThat(response.body()).isEqualTo("ok\n");
    }

    @Test
    void readyz_namesEveryFailingCheck_andAThrowingCheckCountsAsFailing() throws Exception {
        HttpResponse<String> response = get("/readyz");
        assertThat(response.statusCode()).isEqualTo(503);
        assertThat(response.body()).contains("[-]informer-synced failed", "[-]broken failed");

        synced.set(true);
        assertThat(get("/readyz").body()).doesNotContain("informer-synced").contains("[-]broken failed");
    }

    @Test
    void metrics_servesPrometheusText() throws Exception {
        registry.counter("satoken_test_events", "result", "ok").increment(3);
        HttpResponse<String> response = get("/metrics");
        assertThat(response.statusCode()).isEqualTo(200);
        assertThat(response.headers().firstValue("Content-Type")).hasValueSatisfying(
                type -> assertThat(type).startsWith("text/plain; version=0.0.4"));
        assertThat(response.body()).contains("satoken_test_events_total{result=\"ok\"} 3.0");
    }

    @Test
    void writes_areRefused() throws Exception {
        HttpResponse<String> response = http.send(
                HttpRequest.newBuilder(uri("/metrics")).POST(HttpRequest.BodyPublishers.noBody()).build(),
                HttpResponse.BodyHandlers.ofString());
        assertThat(response.statusCode()).isEqualTo(405);
    }

    @Test
    void head_answersTheStatusWithoutABody() throws Exception {
        HttpResponse<String> response = http.send(
                HttpRequest.newBuilder(uri("/healthz")).method("HEAD", HttpRequest.BodyPublishers.noBody()).build(),
                HttpResponse.BodyHandlers.ofString());
        assertThat(response.statusCode()).isEqualTo(200);
        assertThat(response.body()).isEmpty();
    }

    @Test
    void query_isIgnored_andUnknownPaths_are404() throws Exception {
        assertThat(get("/healthz?verbose").statusCode()).isEqualTo(200);
        HttpResponse<String> unknown = get("/debug/pprof");
        assertThat(unknown.statusCode()).isEqualTo(404);
        assertThat(unknown.body()).contains("no endpoint at /debug/pprof");
    }

    private HttpResponse<String> get(String path) throws Exception {
        return http.send(HttpRequest.newBuilder(uri(path)).GET().build(), HttpResponse.BodyHandlers.ofString());
    }

    private URI uri(String path) {
        return URI.create("http://127.0.0.1:" + server.address().getPort() + path);
    }

    @Test
    void takenAddress_failsToStart_namingTheFlagAndTheAddress() throws Exception {
        try (java.net.ServerSocket taken = new java.net.ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
            HealthServer second = new HealthServer(new InetSocketAddress("127.0.0.1", taken.getLocalPort()), registry,
                    List.of(), List.of());

            assertThatThrownBy(second::start).isInstanceOf(java.net.BindException.class)
                    .hasMessageStartingWith("--metrics-address 127.0.0.1:" + taken.getLocalPort() + ": ");
        }
    }
}
