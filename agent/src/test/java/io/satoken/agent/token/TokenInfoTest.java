package io.satoken.agent.token;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Instant;
import java.time.InstantSource;
import java.util.Base64;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;
import org.junit.jupiter.api.Test;

class TokenInfoTest {

    private static final Instant NOW = Instant.parse("2025-03-01T12:00:00Z");

    private final LocalIssuer issuer = LocalIssuer.generate("https://satoken.local", InstantSource.fixed(NOW));

    @Test
    void parse_podBoundToken() throws Exception {
        IssuedToken token = issuer.issue(
                new TokenKey("team-a", "builder", List.of("vault", "api"), 600, BoundObjectRef.pod("web-0", "pod-uid-1")));

        TokenInfo info = TokenInfo.parse(token.token());

        assertThat(info).isEqualTo(new TokenInfo(issuer.keyId(), "https://satoken.local",
                "system:serviceaccount:team-a:builder", List.of("vault", "api"),
                NOW, NOW, NOW.plusSeconds(600), "pod-uid-1"));
    }

    @Test
    void parse_unboundTokenHasNoPodUid() throws Exception {
        IssuedToken token = issuer.issue(new TokenKey("team-a", "builder", List.of("api"), 600, null));

        assertThat(TokenInfo.parse(token.token()).podUid()).isNull();
    }

    @Test
    void parse_surroundingWhitespaceIgnored() throws Exception {
        IssuedToken token = issuer.issue(new TokenKey("team-a", "builder", null, 0, null));

        assertThat(TokenInfo.parse("\n " + token.token() + "\n").expiresAt()).isEqualTo(NOW.plusSeconds(3600));
    }

    @Test
    void parse_absentClaimsAreNull() {
        String header = b64("{\"alg\":\"ES256\"}");
        String payload = b64("{\"sub\":\"x\"}");

        TokenInfo info = TokenInfo.parse(header + "." + payload + ".c2ln");

        assertThat(info).isEqualTo(new TokenInfo(null, null, "x", List.of(), null, null, null, null));
    }

    record Garbage(String name, String input) {
        @Override
        public String toString() {
            return name;
        }
    }

    static Stream<Garbage> garbage() {
        String header = b64("{\"alg\":\"ES256\",\"kid\":\"k1\"}");
        return Stream.of(
                new Garbage("empty", "  "),
                new Garbage("one part", "secretsecretsecret"),
                new Garbage("two parts", "secret.secretsecret"),
                new Garbage("five parts (JWE)", "a.b.c.d.secretsecret"),
                new Garbage("header not base64 JSON", "secret!!.secretpayload.sig"),
                new Garbage("alg none", b64("{\"alg\":\"none\"}") + "." + b64("{\"sub\":\"secretsub\"}") + "."),
                new Garbage("payload not JSON", header + "." + b64("secret-not-json") + ".c2ln"),
                new Garbage("exp not a number", header + "." + b64("{\"exp\":\"secret-exp\"}") + ".c2ln"));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("garbage")
    void parse_garbageIsRejectedWithoutEchoingIt(Garbage garbage) {
        assertThatThrownBy(() -> TokenInfo.parse(garbage.input()))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageStartingWith("not a JWT: ")
                .hasNoCause()
                .satisfies(e -> assertThat(e.getMessage()).doesNotContain("secret"));
    }

    @Test
    void parse_nullIsRejected() {
        assertThatThrownBy(() -> TokenInfo.parse(null)).hasMessage("not a JWT: empty");
    }

    private static String b64(String s) {
        return Base64.getUrlEncoder().withoutPadding().encodeToString(s.getBytes(java.nio.charset.StandardCharsets.UTF_8));
    }
}
