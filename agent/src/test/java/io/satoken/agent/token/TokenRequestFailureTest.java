package io.satoken.agent.token;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.sun.net.httpserver.HttpServer;
import io.kubernetes.client.openapi.ApiClient;
import io.kubernetes.client.util.ClientBuilder;
import io.kubernetes.client.util.credentials.AccessTokenAuthentication;
import io.satoken.common.kube.RateLimiter;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * How failed TokenRequest calls are classified. A local HTTP server returns canned error responses:
 * this tests our HTTP client handling, not Kubernetes; real API behaviour is in TokenRequestSourceIT.
 */
class TokenRequestFailureTest {

    private static final String AGENT_CREDENTIAL = "agent-credential-must-not-leak";
    private static final TokenKey KEY = new TokenKey("ns", "app-sa", List.of("vault"), 600, BoundObjectRef.NONE);

    /** A canned response and what the agent must make of it. */
    record Case(String name, int code, Map<String, String> headers, String body,
                boolean permanent, Duration retryAfter, String message) {
        @Override
        public String toString() {
            return name;
        }
    }

    static Stream<Case> cases() {
        String prefix = "TokenRequest for ns/app-sa failed: ";
        return Stream.of(
                new Case("429 with Retry-After is retried after it", 429, Map.of("Retry-After", "7"),
                        status(429, "TooManyRequests", "too many requests, please try again later"),
                        false, Duration.ofSeconds(7),
                        prefix + "429 Too Many Requests: too many requests, please try again later"),
                new Case("429 without header takes the Status's retryAfterSeconds", 429, Map.of(),
                        "{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"status\":\"Failure\",\"message\":\"slow down\","
                                + "\"reason\":\"TooManyRequests\",\"details\":{\"retryAfterSeconds\":3},\"code\":429}",
                        false, Duration.ofSeconds(3), prefix + "429 Too Many Requests: slow down"),
                new Case("429 with an HTTP-date Retry-After has no delay", 429,
                        Map.of("Retry-After", "Wed, 21 Oct 2015 07:28:00 GMT"), status(429, "TooManyRequests", "later"),
                        false, null, prefix + "429 Too Many Requests: later"),
                new Case("503 is retried", 503, Map.of(),
                        status(503, "ServiceUnavailable", "the server is currently unable to handle the request"),
                        false, null,
                        prefix + "503 Service Unavailable: the server is currently unable to handle the request"),
                new Case("500 with an HTML body is retried and described from the body", 500, Map.of(),
                        "<html>\n  <body>upstream   broke</body>\n</html>", false, null,
                        prefix + "500 Internal Server Error: <html> <body>upstream broke</body> </html>"),
                new Case("502 with no body is retried", 502, Map.of(), "", false, null,
                        prefix + "502 Bad Gateway: (empty response body)"),
                new Case("401 is retried: the agent's own credentials may be re-read", 401, Map.of(),
                        status(401, "Unauthorized", "Unauthorized"), false, null, prefix + "401 Unauthorized: Unauthorized"),
                new Case("404 unknown ServiceAccount is permanent", 404, Map.of(),
                        status(404, "NotFound", "serviceaccounts \\\"app-sa\\\" not found"), true, null,
                        prefix + "404 Not Found: serviceaccounts \"app-sa\" not found"),
                new Case("403 is permanent", 403, Map.of("Retry-After", "1"),
                        status(403, "Forbidden", "serviceaccounts \\\"app-sa\\\" is forbidden: User \\\"agent\\\" "
                                + "cannot create resource \\\"serviceaccounts/token\\\" in API group \\\"\\\" "
                                + "in the namespace \\\"ns\\\""), true, null,
                        prefix + "403 Forbidden: serviceaccounts \"app-sa\" is forbidden: User \"agent\" cannot create "
                                + "resource \"serviceaccounts/token\" in API group \"\" in the namespace \"ns\""),
                new Case("422 invalid request is permanent", 422, Map.of(),
                        status(422, "Invalid", "TokenRequest.authentication.k8s.io \\\"app-sa\\\" is invalid: "
                                + "spec.expirationSeconds: Invalid value: 60: may not specify a duration less than 10 minutes"),
                        true, null, prefix + "422 Unprocessable Entity: TokenRequest.authentication.k8s.io \"app-sa\" "
                                + "is invalid: spec.expirationSeconds: Invalid value: 60: may not specify a duration "
                                + "less than 10 minutes"),
                new Case("400 is permanent", 400, Map.of(),
                        status(400, "BadRequest", "cannot bind token for serviceaccount \\\"app-sa\\\" to pod running "
                                + "with different serviceaccount name."), true, null,
                        prefix + "400 Bad Request: cannot bind token for serviceaccount \"app-sa\" to pod running with "
                                + "different serviceaccount name."),
                new Case("409 stale pod uid is permanent", 409, Map.of(),
                        status(409, "Conflict", "Operation cannot be fulfilled on Pod \\\"web-0\\\": the UID in the "
                                + "bound object reference (u1) does not match the UID in record."), true, null,
                        prefix + "409 Conflict: Operation cannot be fulfilled on Pod \"web-0\": the UID in the bound "
                                + "object reference (u1) does not match the UID in record."),
                new Case("an unlisted code still shows its number", 418, Map.of(), "", true, null,
                        prefix + "418: (empty response body)"));
    }

    private static String status(int code, String reason, String message) {
        return "{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"metadata\":{},\"status\":\"Failure\","
                + "\"message\":\"" + message + "\",\"reason\":\"" + reason + "\",\"code\":" + code + "}";
    }

    private HttpServer server;
    private volatile Case answer;
    private final AtomicInteger requests = new AtomicInteger();
    private volatile String requestLine;

    @BeforeEach
    void startServer() throws IOException {
        server = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0);
        server.createContext("/", exchange -> {
            requests.incrementAndGet();
            requestLine = exchange.getRequestMethod() + " " + exchange.getRequestURI();
            Case c = answer;
            c.headers().forEach((k, v) -> exchange.getResponseHeaders().add(k, v));
            exchange.getResponseHeaders().add("Content-Type", "application/json");
            byte[] body = c.body().getBytes(StandardCharsets.UTF_8);
            exchange.sendResponseHeaders(c.code(), body.length == 0 ? -1 : body.length);
            try (OutputStream out = exchange.getResponseBody()) {
                out.write(body);
            }
        });
        server.start();
    }

    @AfterEach
    void stopServer() {
        server.stop(0);
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("cases")
    void errorResponse_isClassified(Case c) {
        answer = c;
        TokenRequestSource source = new TokenRequestSource(client(server.getAddress().getPort()), RateLimiter.defaults());

        assertThatThrownBy(() -> source.issue(KEY))
                .isInstanceOfSatisfying(TokenSourceException.class, e -> {
                    assertThat(e).hasMessage(c.message());
                    assertThat(e.permanent()).as("permanent").isEqualTo(c.permanent());
                    assertThat(e.retryAfter().orElse(null)).as("retryAfter").isEqualTo(c.retryAfter());
                    assertThat(e.getMessage()).doesNotContain(AGENT_CREDENTIAL).doesNotContain("vault");
                    assertThat(e.getCause()).isNotNull();
                });
        assertThat(requestLine).isEqualTo("POST /api/v1/namespaces/ns/serviceaccounts/app-sa/token");
    }

    @Test
    void unreadableSuccessBody_isRetryableAndNeverQuotesTheBody() {
        String secret = "eyJhbGciOiJSUzI1NiJ9.secret-token-text";
        answer = new Case("201 with a malformed body", 201, Map.of(),
                "{\"kind\":\"TokenRequest\",\"apiVersion\":\"authentication.k8s.io/v1\","
                        + "\"status\":{\"token\":\"" + secret + "\",\"expirationTimestamp\":[1]}}",
                false, null, "");
        TokenRequestSource source = new TokenRequestSource(client(server.getAddress().getPort()), RateLimiter.defaults());

        assertThatThrownBy(() -> source.issue(KEY))
                .isInstanceOfSatisfying(TokenSourceException.class, e -> {
                    assertThat(e.permanent()).isFalse();
                    assertThat(e).hasMessage("TokenRequest for ns/app-sa failed: unreadable response: the API server's "
                            + "answer is not a TokenRequest");
                    for (Throwable t = e; t != null; t = t.getCause()) {
                        assertThat(String.valueOf(t.getMessage())).doesNotContain("secret-token-text");
                    }
                });
    }

    @Test
    void connectionRefused_isRetryable() throws IOException {
        int closedPort;
        try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            closedPort = s.getLocalPort();
        }
        TokenRequestSource source = new TokenRequestSource(client(closedPort), RateLimiter.defaults());

        assertThatThrownBy(() -> source.issue(KEY))
                .isInstanceOfSatisfying(TokenSourceException.class, e -> {
                    assertThat(e.permanent()).isFalse();
                    assertThat(e.retryAfter()).isEmpty();
                    assertThat(e).hasMessageStartingWith(
                            "TokenRequest for ns/app-sa failed: no response from the API server: Failed to connect to /127.0.0.1:");
                });
    }

    @Test
    void silentServer_timesOutAndIsRetryable() throws IOException {
        // a listening socket that is never accepted: the connection opens, no answer ever comes
        try (ServerSocket silent = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            ApiClient client = client(silent.getLocalPort());
            client.setReadTimeout(200);
            TokenRequestSource source = new TokenRequestSource(client, RateLimiter.defaults());

            assertThatThrownBy(() -> source.issue(KEY))
                    .isInstanceOfSatisfying(TokenSourceException.class, e -> {
                        assertThat(e.permanent()).isFalse();
                        assertThat(e).hasMessageStartingWith("TokenRequest for ns/app-sa failed: "
                                + "no response from the API server: timed out");
                    });
        }
    }

    @Test
    void rateLimit_refusesBeforeTheRequestIsSent() {
        answer = cases().filter(c -> c.code() == 503).findFirst().orElseThrow();
        RateLimiter oneThenNothing = new RateLimiter(0.001, 1, Duration.ZERO);
        TokenRequestSource source = new TokenRequestSource(client(server.getAddress().getPort()), oneThenNothing);

        assertThatThrownBy(() -> source.issue(KEY)).hasMessageContaining("503");
        assertThatThrownBy(() -> source.issue(KEY))
                .isInstanceOfSatisfying(TokenSourceException.class, e -> {
                    assertThat(e.permanent()).isFalse();
                    assertThat(e).hasMessage("TokenRequest for ns/app-sa failed: client-side rate limit "
                            + "(0.001 qps, burst 1) has no free slot within 0s");
                });
        assertThat(requests).hasValue(1);
    }

    @Test
    void interruptedWhileWaitingForTheLimit_keepsTheInterruptFlag() {
        answer = cases().filter(c -> c.code() == 503).findFirst().orElseThrow();
        TokenRequestSource source = new TokenRequestSource(client(server.getAddress().getPort()),
                new RateLimiter(0.001, 1, Duration.ofHours(1)));
        assertThatThrownBy(() -> source.issue(KEY)).hasMessageContaining("503");

        Thread.currentThread().interrupt();
        try {
            assertThatThrownBy(() -> source.issue(KEY))
                    .isInstanceOf(TokenSourceException.class)
                    .hasMessageContaining("interrupted while waiting for the client-side rate limit");
            assertThat(Thread.currentThread().isInterrupted()).isTrue();
        } finally {
            Thread.interrupted();
        }
    }

    private static ApiClient client(int port) {
        ApiClient client = new ClientBuilder()
                .setBasePath("http://127.0.0.1:" + port)
                .setAuthentication(new AccessTokenAuthentication(AGENT_CREDENTIAL))
                .build();
        client.setReadTimeout(5_000);
        return client;
    }
}
