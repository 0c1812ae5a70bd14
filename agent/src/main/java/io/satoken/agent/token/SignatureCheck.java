package io.satoken.agent.token;

import com.nimbusds.jwt.SignedJWT;

/**
 * Whether a token found on disk was signed by the cluster's ServiceAccount issuer, so that
 * {@code refresh.TokenAdoption} may trust its claims. {@link IssuerKeys} is the real one.
 */
@FunctionalInterface
public interface SignatureCheck {

    /**
     * @return null when the signature verifies; otherwise why not, in words that never hold the token
     */
    String whyNot(SignedJWT jwt);

    /** No keys are known: nothing verifies, so nothing is adopted. */
    static SignatureCheck unavailable(String reason) {
        return new Unavailable(reason);
    }

    /** The keys could not be had, for {@code reason}. */
    record Unavailable(String reason) implements SignatureCheck {
        @Override
        public String whyNot(SignedJWT jwt) {
            return "the API server's ServiceAccount keys are not known (" + reason + ")";
        }
    }
}
