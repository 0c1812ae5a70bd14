package io.satoken.agent.token;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.kubernetes.client.openapi.JSON;
import io.kubernetes.client.openapi.models.AuthenticationV1TokenRequest;
import io.kubernetes.client.openapi.models.V1BoundObjectReference;
import io.kubernetes.client.openapi.models.V1TokenRequestSpec;
import io.kubernetes.client.openapi.models.V1TokenRequestStatus;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.util.List;
import org.junit.jupiter.api.Test;

/** What is sent (PV-14) and how the answer is read; failures are in {@link TokenRequestFailureTest}. */
class TokenRequestSourceTest {

    private static final Instant EXPIRY = Instant.parse("2030-01-01T01:00:00Z");

    private static TokenKey key(List<String> audiences, long expirationSeconds, BoundObjectRef bound) {
        return new TokenKey("ns", "app-sa", audiences, expirationSeconds, bound);
    }

    @Test
    void request_nullAudiencesStayNullAndAreNotSent() {
        AuthenticationV1TokenRequest request = TokenRequestSource.requestFor(key(null, 600, null));

        assertThat(request.getSpec().getAudiences()).isNull(); // PV-14, PV-3: the server uses its own
        assertThat(JSON.serialize(request)).doesNotContain("audiences");
    }

    @Test
    void request_emptyAudiencesAreSentAsEmpty() {
        // TM-1: null and empty are different keys; an explicit empty list is passed through as it is
        AuthenticationV1TokenRequest request = TokenRequestSource.requestFor(key(List.of(), 600, null));

        assertThat(request.getSpec().getAudiences()).isEmpty();
        assertThat(JSON.serialize(request)).contains("\"audiences\":[]");
    }

    @Test
    void request_audiencesKeepTheirOrder() {
        assertThat(TokenRequestSource.requestFor(key(List.of("vault", "aws"), 600, null)).getSpec().getAudiences())
                .containsExactly("vault", "aws");
    }

    @Test
    void request_zeroExpirationIsSentAsNull() {
        // PV-2: the server defaults a missing expirationSeconds to 3600
        V1TokenRequestSpec spec = TokenRequestSource.requestFor(key(null, 0, null)).getSpec();

        assertThat(spec.getExpirationSeconds()).isNull();
        assertThat(JSON.serialize(spec)).doesNotContain("expirationSeconds");
    }

    @Test
    void request_expirationIsPassedThrough() {
        assertThat(TokenRequestSource.requestFor(key(null, 7200, null)).getSpec().getExpirationSeconds())
                .isEqualTo(7200L);
    }

    @Test
    void request_podBoundKeySendsThePodReference() {
        V1BoundObjectReference ref = TokenRequestSource
                .requestFor(key(List.of("vault"), 600, BoundObjectRef.pod("web-0", "uid-1"))).getSpec()
                .getBoundObjectRef();

        assertThat(ref).isEqualTo(new V1BoundObjectReference().apiVersion("v1").kind("Pod").name("web-0").uid("uid-1"));
    }

    @Test
    void request_unboundKeySendsNoReference() {
        AuthenticationV1TokenRequest request = TokenRequestSource.requestFor(key(null, 600, BoundObjectRef.NONE));

        assertThat(request.getSpec().getBoundObjectRef()).isNull();
        assertThat(request.getMetadata()).isNull(); // like kubelet: the URL names the ServiceAccount
    }

    @Test
    void response_opaqueTokenIsIssuedAtExpiryMinusTheServersLifetime() throws TokenSourceException {
        AuthenticationV1TokenRequest response = response("opaque-token", 3600L);

        IssuedToken token = TokenRequestSource.issuedToken(key(null, 0, null), response);

        // TM-8: no iat claim, so issuedAt = expirationTimestamp - spec.expirationSeconds (server-defaulted)
        assertThat(token.issuedAt()).isEqualTo(EXPIRY.minusSeconds(3600));
        assertThat(token.expiresAt()).isEqualTo(EXPIRY);
    }

    @Test
    void response_withoutSpecFallsBackToTheRequestedLifetime() throws TokenSourceException {
        AuthenticationV1TokenRequest response = response("opaque-token", null).spec(null);

        IssuedToken token = TokenRequestSource.issuedToken(key(null, 600, null), response);

        assertThat(token.issuedAt()).isEqualTo(EXPIRY.minusSeconds(600));
    }

    @Test
    void response_withoutTokenIsAnErrorThatNamesTheKeyOnly() {
        AuthenticationV1TokenRequest response = response(null, 3600L);

        assertThatThrownBy(() -> TokenRequestSource.issuedToken(key(null, 0, null), response))
                .isInstanceOfSatisfying(TokenSourceException.class, e -> {
                    assertThat(e.permanent()).isFalse();
                    assertThat(e).hasMessage("TokenRequest for ns/app-sa failed: "
                            + "the response has no status.token or no status.expirationTimestamp");
                });
    }

    @Test
    void response_withoutLifetimeOrIatIsAnErrorWithoutTheToken() {
        AuthenticationV1TokenRequest response = response("secret-opaque-token", null);

        assertThatThrownBy(() -> TokenRequestSource.issuedToken(key(null, 0, null), response))
                .isInstanceOf(TokenSourceException.class)
                .hasMessageStartingWith("TokenRequest for ns/app-sa failed: ")
                .hasMessageNotContaining("secret-opaque-token");
    }

    private static AuthenticationV1TokenRequest response(String token, Long seconds) {
        return new AuthenticationV1TokenRequest()
                .spec(new V1TokenRequestSpec().audiences(List.of("https://api")).expirationSeconds(seconds))
                .status(new V1TokenRequestStatus().token(token)
                        .expirationTimestamp(OffsetDateTime.ofInstant(EXPIRY, ZoneOffset.UTC)));
    }
}
