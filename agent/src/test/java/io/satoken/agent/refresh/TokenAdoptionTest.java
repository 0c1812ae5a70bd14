package io.satoken.agent.refresh;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.nimbusds.jose.JWSAlgorithm;
import com.nimbusds.jose.JWSHeader;
import com.nimbusds.jose.crypto.ECDSASigner;
import com.nimbusds.jose.jwk.Curve;
import com.nimbusds.jose.jwk.ECKey;
import com.nimbusds.jose.jwk.gen.ECKeyGenerator;
import com.nimbusds.jose.util.Base64URL;
import com.nimbusds.jwt.JWTClaimsSet;
import com.nimbusds.jwt.PlainJWT;
import com.nimbusds.jwt.SignedJWT;

import io.satoken.agent.projection.Projection;
import io.satoken.agent.projection.TokenDirectory;
import io.satoken.agent.token.BoundObjectRef;
import io.satoken.agent.token.CachedToken;
import io.satoken.agent.token.SignatureCheck;
import io.satoken.agent.token.TokenSourceException;
import io.satoken.agent.token.IssuedToken;
import io.satoken.agent.token.IssuerKeys;
import io.satoken.agent.token.LocalIssuer;
import io.satoken.agent.token.TokenCache;
import io.satoken.agent.token.TokenKey;
import io.satoken.agent.testing.FakeClock;
import io.satoken.agent.testing.RefreshHarness;
import io.satoken.agent.write.AtomicWriter;
import io.satoken.agent.write.FileContent;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.Date;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

class TokenAdoptionTest {
    private static final Instant START = RefreshHarness.START;
    private static final BoundObjectRef POD = BoundObjectRef.pod("web-0", "0b7c6a2e-1111-2222-3333-444455556666");
    private static final TokenKey VAULT = new TokenKey("ns", "app", List.of("vault"), 3600, POD);

    @TempDir
    Path dir;

    private final Map<String, FileContent> written = new HashMap<>();

    private final RefreshHarness refresh = RefreshHarness.builder()
            .sourceFails(new TokenSourceException("no calls expected")).build();
    private final FakeClock clock = refresh.clock();
    private final LocalIssuer issuer = LocalIssuer.generate("https://issuer.test", List.of("https://api"), clock);
    private final TokenCache cache = refresh.cache();
    private final IssuerKeys keys = IssuerKeys.parse(issuer.publicJwksJson());
    private final TokenAdoption adoption = new TokenAdoption(cache, Optional.of(List.of("https://api")), keys);

    @Test
    void matchingTokenNotYetDue_isAdopted_andServedWithoutACall() throws Exception {
        IssuedToken issued = issueAndWrite(VAULT, "vault-token");
        clock.advance(Duration.ofMinutes(20));

        assertThat(adoption.adopt(dir(VAULT, "vault-token"))).isEqualTo(1);
        CachedToken cached = cache.get(VAULT);
        assertThat(cached.token().token()).isEqualTo(issued.token());
        assertThat(cached.refreshAt()).isEqualTo(START.plus(Duration.ofMinutes(48)));
    }

    @Test
    void tokenPastItsRefreshPoint_isNotAdopted() throws Exception {
        issueAndWrite(VAULT, "vault-token");
        clock.advance(Duration.ofMinutes(48).plusSeconds(1));
        assertThat(adoption.adopt(dir(VAULT, "vault-token"))).isZero();
    }

    @Test
    void mismatchedSubjectAudiencesOrPod_isNotAdopted() throws Exception {
        issueAndWrite(VAULT, "vault-token");
        TokenKey otherSa = new TokenKey("ns", "other", List.of("vault"), 3600, POD);
        TokenKey otherAudience = new TokenKey("ns", "app", List.of("sts"), 3600, POD);
        TokenKey otherPod = new TokenKey("ns", "app", List.of("vault"), 3600, BoundObjectRef.pod("web-0", "another-uid"));
        TokenKey unbound = new TokenKey("ns", "app", List.of("vault"), 3600, BoundObjectRef.NONE);
        for (TokenKey key : List.of(otherSa, otherAudience, otherPod, unbound)) {
            assertThat(adoption.adopt(dir(key, "vault-token"))).as(key.toString()).isZero();
        }
        assertThat(cache.size()).isZero();
    }

    @Test
    void noAudiences_adoptedOnlyWhenTheServersDefaultsAreKnownAndMatch() throws Exception {
        TokenKey defaults = new TokenKey("ns", "app", null, 3600, POD);
        issueAndWrite(defaults, "token");
        TokenAdoption unknownDefaults = new TokenAdoption(cache, Optional.empty(), keys);
        assertThat(unknownDefaults.adopt(dir(defaults, "token"))).isZero();
        assertThat(new TokenAdoption(cache, Optional.of(List.of("https://other")), keys).adopt(dir(defaults, "token")))
                .isZero();
        assertThat(adoption.adopt(dir(defaults, "token"))).isEqualTo(1);
    }

    @Test
    void extendedToken_isRefreshedOnTheRequestedSchedule() throws Exception {
        // PV-23: a JWT valid for a year that was requested for 3607 s counts as a 3607 s token.
        TokenKey key = new TokenKey("ns", "app", List.of("vault"), 3607, POD);
        IssuedToken year = issuer.issue(new TokenKey("ns", "app", List.of("vault"), 365L * 24 * 3600, POD));
        write("token", year.token());
        assertThat(adoption.adopt(dir(key, "token"))).isEqualTo(1);
        assertThat(cache.peek(key)).hasValueSatisfying(
                c -> assertThat(c.token().expiresAt()).isEqualTo(START.plusSeconds(3607)));
    }

    @Test
    void junkMissingOrHugeFiles_areIgnored() throws Exception {
        write("junk", "not a jwt");
        write("huge", "x".repeat(70_000));
        assertThat(adoption.adopt(new TokenDirectory("d", dir, List.of(
                new Projection(VAULT, "junk", 0600, null, null),
                new Projection(VAULT, "huge", 0600, null, null),
                new Projection(VAULT, "missing", 0600, null, null))))).isZero();
    }

    record Forged(String name, String token) {
        @Override
        public String toString() {
            return name;
        }
    }

    /** Tokens whose claims are exactly a genuine token's, and whose signature is not the API server's. */
    static Stream<Forged> forgeries() throws Exception {
        FakeClock clock = new FakeClock(START);
        LocalIssuer genuine = LocalIssuer.generate("https://issuer.test", List.of("https://api"), clock);
        SignedJWT real = SignedJWT.parse(genuine.issue(VAULT).token());
        JWTClaimsSet claims = real.getJWTClaimsSet();
        ECKey attacker = new ECKeyGenerator(Curve.P_256).keyIDFromThumbprint(true).generate();
        Base64URL[] parts = real.getParsedParts();
        // what a forger wants: a token that looks fresh, so it is served for longer
        Date later = Date.from(START.plus(Duration.ofMinutes(19)));
        JWTClaimsSet fresher = new JWTClaimsSet.Builder(claims).issueTime(later).notBeforeTime(later)
                .expirationTime(Date.from(START.plus(Duration.ofMinutes(79)))).build();
        return Stream.of(
                new Forged("another key under the genuine kid", sign(attacker, genuine.keyId(), claims)),
                new Forged("another key under its own kid", sign(attacker, attacker.getKeyID(), claims)),
                new Forged("another issuer's genuine token",
                        LocalIssuer.generate("https://issuer.test", List.of("https://api"), clock).issue(VAULT).token()),
                new Forged("genuine header and signature, times moved forward", parts[0] + "."
                        + Base64URL.encode(fresher.toString()) + "." + parts[2]),
                new Forged("no signature at all", parts[0] + "." + parts[1] + "."),
                new Forged("unsigned (alg none)", new PlainJWT(claims).serialize()));
    }

    private static String sign(ECKey key, String kid, JWTClaimsSet claims) throws Exception {
        SignedJWT jwt = new SignedJWT(new JWSHeader.Builder(JWSAlgorithm.ES256).keyID(kid).build(), claims);
        jwt.sign(new ECDSASigner(key));
        return jwt.serialize();
    }

    // finding 5: a token on disk is trusted only once the API server's keys verify it
    @ParameterizedTest(name = "{0}")
    @MethodSource("forgeries")
    void forgedToken_withValidClaims_isNotAdopted(Forged forged) throws Exception {
        write("vault-token", forged.token());
        clock.advance(Duration.ofMinutes(20));

        assertThat(adoption.adopt(dir(VAULT, "vault-token"))).isZero();
        assertThat(cache.size()).isZero();
        assertThat(dir.resolve("vault-token")).as("the file stays until a new token replaces it").hasContent(forged.token());
    }

    @Test
    void genuineToken_sameClaimsAsAForgery_isAdopted() throws Exception {
        IssuedToken genuine = issueAndWrite(VAULT, "vault-token");

        assertThat(adoption.adopt(dir(VAULT, "vault-token"))).isEqualTo(1);
        assertThat(cache.get(VAULT).token().token()).isEqualTo(genuine.token());
    }

    @Test
    void keysUnavailable_nothingIsAdopted_andTheFileStays() throws Exception {
        IssuedToken genuine = issueAndWrite(VAULT, "vault-token");
        TokenAdoption withoutKeys = new TokenAdoption(cache, Optional.of(List.of("https://api")),
                SignatureCheck.unavailable("GET /openid/v1/jwks answered HTTP 403"));

        assertThat(withoutKeys.adopt(dir(VAULT, "vault-token"))).isZero();
        assertThat(cache.size()).isZero();
        assertThat(dir.resolve("vault-token")).hasContent(genuine.token());
    }

    @Test
    void keys_ofAnotherIssuerToo_stillVerifyTheGenuineToken() throws Exception {
        // the API server may sign with one key and publish several (--service-account-key-file given twice)
        LocalIssuer other = LocalIssuer.generate("https://issuer.test", clock);
        String both = "{\"keys\":[" + keyOf(other.publicJwksJson()) + "," + keyOf(issuer.publicJwksJson()) + "]}";
        issueAndWrite(VAULT, "vault-token");

        TokenAdoption twoKeys = new TokenAdoption(cache, Optional.of(List.of("https://api")), IssuerKeys.parse(both));

        assertThat(twoKeys.adopt(dir(VAULT, "vault-token"))).isEqualTo(1);
    }

    @Test
    void issuerKeys_refuseADocumentWithoutPublicKeys() {
        assertThatThrownBy(() -> IssuerKeys.parse("{\"keys\":[]}"))
                .hasMessage("the JWKS holds no RSA or EC public key");
        assertThatThrownBy(() -> IssuerKeys.parse("not json")).hasMessageStartingWith("not a JWKS document");
    }

    private static String keyOf(String jwks) {
        return jwks.substring(jwks.indexOf('[') + 1, jwks.lastIndexOf(']'));
    }

    private IssuedToken issueAndWrite(TokenKey key, String path) throws Exception {
        IssuedToken token = issuer.issue(key);
        write(path, token.token());
        return token;
    }

    /** Adoption reads only what the writer published: each file joins the files written so far, in one version. */
    private void write(String path, String content) throws Exception {
        written.put(path, FileContent.of(content.getBytes(StandardCharsets.US_ASCII), 0600));
        new AtomicWriter(dir, clock).write(written);
    }

    private TokenDirectory dir(TokenKey key, String path) {
        return new TokenDirectory("d", dir, List.of(new Projection(key, path, 0600, null, null)));
    }
}
