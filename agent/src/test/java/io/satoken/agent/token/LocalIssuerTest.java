package io.satoken.agent.token;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.nimbusds.jose.JWSAlgorithm;
import com.nimbusds.jose.crypto.ECDSAVerifier;
import com.nimbusds.jose.jwk.ECKey;
import com.nimbusds.jose.jwk.JWKSet;
import com.nimbusds.jwt.JWTClaimsSet;
import com.nimbusds.jwt.SignedJWT;
import java.time.Instant;
import java.time.InstantSource;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class LocalIssuerTest {

    private static final Instant NOW = Instant.parse("2025-03-01T12:00:00.750Z");
    private static final Instant NOW_SECONDS = Instant.parse("2025-03-01T12:00:00Z");
    private static final String ISSUER = "https://satoken.local";

    private final LocalIssuer issuer = LocalIssuer.generate(ISSUER, InstantSource.fixed(NOW));

    private static TokenKey key(List<String> audiences, long seconds, BoundObjectRef bound) {
        return new TokenKey("team-a", "builder", audiences, seconds, bound);
    }

    private static SignedJWT parse(IssuedToken token) throws Exception {
        return SignedJWT.parse(token.token());
    }

    @Test
    void claims_haveBoundTokenShape() throws Exception { // CL-6
        IssuedToken token = issuer.issue(key(List.of("vault", "api"), 600, BoundObjectRef.NONE));

        JWTClaimsSet claims = parse(token).getJWTClaimsSet();
        assertThat(claims.getIssuer()).isEqualTo(ISSUER);
        assertThat(claims.getSubject()).isEqualTo("system:serviceaccount:team-a:builder");
        assertThat(claims.getAudience()).containsExactly("vault", "api");
        assertThat(claims.getIssueTime().toInstant()).isEqualTo(NOW_SECONDS);
        assertThat(claims.getNotBeforeTime()).isEqualTo(claims.getIssueTime());
        assertThat(claims.getExpirationTime().toInstant()).isEqualTo(NOW_SECONDS.plusSeconds(600));
        assertThat(claims.getJWTID()).isNotBlank();
    }

    @Test
    void times_issuedTokenMatchesJwtUnderSubSecondClock() throws Exception {
        IssuedToken token = issuer.issue(key(List.of("api"), 2, BoundObjectRef.NONE));

        JWTClaimsSet claims = parse(token).getJWTClaimsSet();
        assertThat(token.issuedAt()).isEqualTo(claims.getIssueTime().toInstant()).isEqualTo(NOW_SECONDS);
        assertThat(token.expiresAt()).isEqualTo(claims.getExpirationTime().toInstant());
        assertThat(token.expiresAt()).isAfter(token.issuedAt()).isEqualTo(NOW_SECONDS.plusSeconds(2));
    }

    @Test
    void audiences_defaultWhenNullOrEmpty() throws Exception { // CL-6, PV-3
        assertThat(parse(issuer.issue(key(null, 600, null))).getJWTClaimsSet().getAudience())
                .isEqualTo(LocalIssuer.DEFAULT_AUDIENCES)
                .containsExactly("https://kubernetes.default.svc");
        assertThat(parse(issuer.issue(key(List.of(), 600, null))).getJWTClaimsSet().getAudience())
                .containsExactly("https://kubernetes.default.svc");

        LocalIssuer custom = LocalIssuer.generate(ISSUER, List.of("https://api"), InstantSource.fixed(NOW));
        assertThat(parse(custom.issue(key(null, 600, null))).getJWTClaimsSet().getAudience())
                .containsExactly("https://api");
    }

    @Test
    void expirationSeconds_zeroMeansOneHour() throws Exception { // PV-2
        IssuedToken token = issuer.issue(key(List.of("api"), 0, null));

        assertThat(token.expiresAt()).isEqualTo(NOW_SECONDS.plusSeconds(3600));
        assertThat(parse(token).getJWTClaimsSet().getExpirationTime().toInstant())
                .isEqualTo(NOW_SECONDS.plusSeconds(3600));
    }

    @Test
    void expirationSeconds_above2pow32IsRefused() { // PV-5
        assertThatThrownBy(() -> issuer.issue(key(List.of("api"), (1L << 32) + 1, null)))
                .isInstanceOf(TokenSourceException.class)
                .hasMessageContaining("larger than 2^32 seconds");
    }

    @Test
    void jti_differsPerToken() throws Exception {
        TokenKey key = key(List.of("api"), 600, null);
        String first = parse(issuer.issue(key)).getJWTClaimsSet().getJWTID();
        String second = parse(issuer.issue(key)).getJWTClaimsSet().getJWTID();

        assertThat(first).isNotEqualTo(second);
    }

    @Test
    void kubernetesClaim_podBound() throws Exception { // CL-7
        IssuedToken token = issuer.issue(key(List.of("api"), 600, BoundObjectRef.pod("web-0", "pod-uid-1")));

        Map<String, Object> k8s = parse(token).getJWTClaimsSet().getJSONObjectClaim("kubernetes.io");
        assertThat(k8s).containsOnlyKeys("namespace", "serviceaccount", "pod");
        assertThat(k8s.get("namespace")).isEqualTo("team-a");
        String saUid = LocalIssuer.serviceAccountUid(key(null, 0, null));
        assertThat(k8s.get("serviceaccount")).isEqualTo(Map.of("name", "builder", "uid", saUid));
        assertThat(k8s.get("pod")).isEqualTo(Map.of("name", "web-0", "uid", "pod-uid-1"));
    }

    @Test
    void kubernetesClaim_unboundHasNoPod() throws Exception { // CL-7
        IssuedToken token = issuer.issue(key(List.of("api"), 600, BoundObjectRef.NONE));

        Map<String, Object> k8s = parse(token).getJWTClaimsSet().getJSONObjectClaim("kubernetes.io");
        assertThat(k8s).containsOnlyKeys("namespace", "serviceaccount");
    }

    @Test
    void kubernetesClaim_unsupportedKindIsRefused() {
        TokenKey key = key(List.of("api"), 600, new BoundObjectRef("v1", "ConfigMap", "cm", "uid"));

        assertThatThrownBy(() -> issuer.issue(key))
                .isInstanceOf(TokenSourceException.class)
                .hasMessageContaining("cannot bind a token to a ConfigMap");
    }

    @Test
    void serviceAccountUid_stablePerAccount() {
        String uid = LocalIssuer.serviceAccountUid(key(null, 0, null));

        assertThat(LocalIssuer.serviceAccountUid(new TokenKey("team-a", "builder", List.of("x"), 5, null)))
                .isEqualTo(uid);
        assertThat(LocalIssuer.serviceAccountUid(new TokenKey("team-b", "builder", null, 0, null)))
                .isNotEqualTo(uid);
        assertThat(LocalIssuer.serviceAccountUid(new TokenKey("team-a", "deployer", null, 0, null)))
                .isNotEqualTo(uid);
    }

    @Test
    void kid_isHeaderAndThumbprint() throws Exception {
        SignedJWT jwt = parse(issuer.issue(key(List.of("api"), 600, null)));
        ECKey published = (ECKey) JWKSet.parse(issuer.publicJwksJson()).getKeys().get(0);

        assertThat(jwt.getHeader().getAlgorithm()).isEqualTo(JWSAlgorithm.ES256);
        assertThat(jwt.getHeader().getKeyID()).isEqualTo(issuer.keyId());
        assertThat(issuer.keyId()).isEqualTo(published.computeThumbprint().toString());
        assertThat(published.getKeyID()).isEqualTo(issuer.keyId());
    }

    @Test
    void signature_verifiesWithPublishedJwks() throws Exception {
        SignedJWT jwt = parse(issuer.issue(key(List.of("api"), 600, null)));
        JWKSet jwks = JWKSet.parse(issuer.publicJwksJson());

        assertThat(jwt.verify(new ECDSAVerifier((ECKey) jwks.getKeyByKeyId(jwt.getHeader().getKeyID())))).isTrue();
    }

    @Test
    void jwks_hasNoPrivatePart() throws Exception {
        String json = issuer.publicJwksJson();

        assertThat(json).doesNotContain("\"d\"");
        assertThat(JWKSet.parse(json).getKeys()).singleElement().satisfies(k -> assertThat(k.isPrivate()).isFalse());
    }

    @Test
    void keys_differPerIssuer() {
        LocalIssuer other = LocalIssuer.generate(ISSUER, InstantSource.fixed(NOW));

        assertThat(other.keyId()).isNotEqualTo(issuer.keyId());
        assertThat(other.publicJwksJson()).isNotEqualTo(issuer.publicJwksJson());
    }

    @Test
    void toString_neverShowsToken() throws Exception {
        IssuedToken token = issuer.issue(key(List.of("api"), 600, BoundObjectRef.pod("web-0", "pod-uid-1")));

        assertThat(token.toString()).doesNotContain(token.token()).contains("<redacted>");
        assertThat(issuer.toString()).doesNotContain(token.token());
    }

    @Test
    void generate_rejectsBadArguments() {
        InstantSource clock = InstantSource.fixed(NOW);
        assertThatThrownBy(() -> LocalIssuer.generate(" ", clock)).hasMessageContaining("issuer");
        assertThatThrownBy(() -> LocalIssuer.generate(ISSUER, List.of(), clock)).hasMessageContaining("defaultAudiences");
    }
}
