package io.satoken.agent.token;

import static org.assertj.core.api.Assertions.assertThat;

import com.nimbusds.jwt.SignedJWT;
import com.sun.net.httpserver.HttpServer;
import io.kubernetes.client.openapi.ApiClient;
import io.satoken.agent.testing.FakeClock;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.List;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** Reading the API server's ServiceAccount keys once at start: what comes back, and every way it can fail. */
class IssuerKeysTest {

    private final LocalIssuer issuer = LocalIssuer.generate("https://issuer.test", List.of("https://api"),
            new FakeClock(Instant.parse("2026-01-01T00:00:00Z")));
    private final AtomicReference<String> path = new AtomicReference<>();
    private final AtomicReference<String> authorization = new AtomicReference<>();
    private int status = 200;
    private byte[] body;
    private HttpServer server;

    @BeforeEach
    void serve() throws Exception {
        body = issuer.publicJwksJson().getBytes(StandardCharsets.UTF_8);
        server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
        server.createContext("/", exchange -> {
            path.set(exchange.getRequestURI().getPath());
            authorization.set(exchange.getRequestHeaders().getFirst("Authorization"));
            exchange.sendResponseHeaders(status, 0); // chunked: no length known in advance
            try (OutputStream out = exchange.getResponseBody()) {
                out.write(body);
            }
        });
        server.start();
    }

    @AfterEach
    void stop() {
        server.stop(0);
    }

    @Test
    void fetch_getsTheJwksWithTheAgentsCredentials_andVerifiesTheIssuersTokens() throws Exception {
        SignatureCheck keys = IssuerKeys.fetch(client());

        assertThat(path.get()).isEqualTo("/openid/v1/jwks");
        assertThat(authorization.get()).isEqualTo("Bearer agent-credential");
        assertThat(keys).isInstanceOfSatisfying(IssuerKeys.class, k -> assertThat(k.size()).isEqualTo(1));
        String token = issuer.issue(new TokenKey("ns", "sa", List.of("a"), 3600, BoundObjectRef.NONE)).token();
        assertThat(keys.whyNot(SignedJWT.parse(token))).isNull();
    }

    @Test
    void fetch_refused_verifiesNothing() {
        status = 403;
        body = "{\"kind\":\"Status\"}".getBytes(StandardCharsets.UTF_8);

        assertThat(IssuerKeys.fetch(client())).isEqualTo(
                SignatureCheck.unavailable("GET /openid/v1/jwks answered HTTP 403"));
    }

    @Test
    void fetch_notAJwks_orTooBig_verifiesNothing() {
        body = "{\"keys\":[]}".getBytes(StandardCharsets.UTF_8);
        assertThat(IssuerKeys.fetch(client())).isInstanceOfSatisfying(SignatureCheck.Unavailable.class,
                u -> assertThat(u.reason()).contains("the JWKS holds no RSA or EC public key"));

        body = new byte[IssuerKeys.MAX_JWKS_BYTES + 1];
        assertThat(IssuerKeys.fetch(client())).isEqualTo(SignatureCheck.unavailable(
                "GET /openid/v1/jwks answered more than 1048576 bytes"));
    }

    @Test
    void fetch_unreachable_verifiesNothing() {
        server.stop(0);

        assertThat(IssuerKeys.fetch(client())).isInstanceOfSatisfying(SignatureCheck.Unavailable.class,
                u -> assertThat(u.reason()).startsWith("GET /openid/v1/jwks failed: "));
    }

    private ApiClient client() {
        ApiClient client = new ApiClient();
        client.setBasePath("http://127.0.0.1:" + server.getAddress().getPort());
        client.setApiKeyPrefix("Bearer");
        client.setApiKey("agent-credential");
        return client;
    }
}
