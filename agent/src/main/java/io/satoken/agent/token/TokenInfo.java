package io.satoken.agent.token;

import com.nimbusds.jwt.JWTClaimsSet;
import com.nimbusds.jwt.SignedJWT;
import java.text.ParseException;
import java.time.Instant;
import java.util.Date;
import java.util.List;
import java.util.Map;

/**
 * The non-secret facts of a signed JWT, read without checking its signature: fit for printing a
 * token's key and expiry, or for deciding whether a token found on disk is still worth keeping. Never
 * use it to decide whether to trust a token.
 *
 * @param keyId the header's {@code kid}; null when absent
 * @param audiences the {@code aud} claim; empty when absent
 * @param podUid {@code kubernetes.io.pod.uid} (CL-7); null when absent or not shaped that way
 */
public record TokenInfo(
        String keyId,
        String issuer,
        String subject,
        List<String> audiences,
        Instant issuedAt,
        Instant notBefore,
        Instant expiresAt,
        String podUid) {

    public TokenInfo {
        audiences = audiences == null ? List.of() : List.copyOf(audiences);
    }

    /**
     * Reads a compact signed JWT. Surrounding whitespace is ignored.
     *
     * @throws IllegalArgumentException "not a JWT: ..." naming what is wrong; the message never holds
     *     the input, and no cause is attached because a parser's message might
     */
    public static TokenInfo parse(String jwt) {
        if (jwt == null || jwt.isBlank()) {
            throw new IllegalArgumentException("not a JWT: empty");
        }
        String text = jwt.strip();
        int parts = text.split("\\.", -1).length;
        if (parts != 3) {
            throw new IllegalArgumentException("not a JWT: expected 3 dot-separated parts, got " + parts);
        }
        SignedJWT signed;
        try {
            signed = SignedJWT.parse(text);
        } catch (ParseException e) {
            throw new IllegalArgumentException("not a JWT: the header is not a base64url JSON JWS header");
        }
        JWTClaimsSet claims;
        try {
            claims = signed.getJWTClaimsSet();
        } catch (ParseException e) {
            throw new IllegalArgumentException("not a JWT: the payload is not a base64url JSON claims set");
        }
        return new TokenInfo(
                signed.getHeader().getKeyID(),
                claims.getIssuer(),
                claims.getSubject(),
                claims.getAudience(),
                instant(claims.getIssueTime()),
                instant(claims.getNotBeforeTime()),
                instant(claims.getExpirationTime()),
                podUid(claims));
    }

    private static Instant instant(Date date) {
        return date == null ? null : date.toInstant();
    }

    private static String podUid(JWTClaimsSet claims) {
        if (claims.getClaim("kubernetes.io") instanceof Map<?, ?> kubernetes
                && kubernetes.get("pod") instanceof Map<?, ?> pod
                && pod.get("uid") instanceof String uid) {
            return uid;
        }
        return null;
    }
}
