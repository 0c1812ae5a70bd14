package io.satoken.e2e;

import com.nimbusds.jwt.SignedJWT;
import io.kubernetes.client.openapi.ApiException;
import io.kubernetes.client.openapi.apis.AuthenticationV1Api;
import io.kubernetes.client.openapi.models.V1TokenReview;
import io.kubernetes.client.openapi.models.V1TokenReviewSpec;
import io.kubernetes.client.openapi.models.V1TokenReviewStatus;
import io.satoken.common.testing.KubeApiServer;
import java.text.ParseException;
import java.util.List;

/**
 * What the API server and the token itself say about a token a test read: a TokenReview for one audience,
 * and the token's audiences. Neither puts the token in a message.
 */
final class ApiChecks {

    private ApiChecks() {
    }

    /** The API server's TokenReview of {@code token} for {@code audience}, or for its own audiences if null. */
    static V1TokenReviewStatus review(KubeApiServer server, String token, String audience) throws ApiException {
        V1TokenReviewSpec spec = new V1TokenReviewSpec().token(token.strip());
        if (audience != null) {
            spec.audiences(List.of(audience));
        }
        return new AuthenticationV1Api(server.adminClient()).createTokenReview(new V1TokenReview().spec(spec))
                .execute().getStatus();
    }

    /** True when the API server authenticates {@code token} for {@code audience} as {@code user}. */
    static boolean accepted(KubeApiServer server, String token, String audience, String user) throws ApiException {
        V1TokenReviewStatus status = review(server, token, audience);
        return Boolean.TRUE.equals(status.getAuthenticated()) && status.getUser() != null
                && user.equals(status.getUser().getUsername());
    }

    /** The token's {@code aud}; empty for something that is not a JWT. */
    static List<String> audiences(String token) {
        try {
            return SignedJWT.parse(token.strip()).getJWTClaimsSet().getAudience();
        } catch (ParseException e) {
            return List.of();
        }
    }

}
