package io.satoken.agent.token;

import com.nimbusds.jwt.JWTParser;
import java.text.ParseException;
import java.time.Duration;
import java.time.Instant;
import java.util.Date;
import java.util.Objects;

/**
 * A token as the issuer returned it, with the two instants the refresh rules need.
 *
 * <p>The token text is a secret: {@link #toString()} never shows it, and nothing in the agent logs it.
 *
 * @param token the serialized JWT
 * @param issuedAt when the token became valid (the JWT's {@code iat}, else expiry minus the requested TTL)
 * @param expiresAt {@code status.expirationTimestamp}; the token is expired strictly after it (TM-7)
 */
public record IssuedToken(String token, Instant issuedAt, Instant expiresAt) {

    public IssuedToken {
        Objects.requireNonNull(token, "token");
        Objects.requireNonNull(issuedAt, "issuedAt");
        Objects.requireNonNull(expiresAt, "expiresAt");
        if (token.isEmpty()) {
            throw new IllegalArgumentException("token: must not be empty");
        }
        if (!expiresAt.isAfter(issuedAt)) {
            throw new IllegalArgumentException(
                    "expiresAt: must be after issuedAt, got issuedAt=" + issuedAt + " expiresAt=" + expiresAt);
        }
    }

    /**
     * Builds the token from a TokenRequest response. The issue time is the JWT's {@code iat} when the
     * token carries one, else {@code expirationTimestamp - expirationSeconds} (TM-8).
     *
     * @param requestedSeconds the response's {@code spec.expirationSeconds}; may be null
     * @throws IllegalArgumentException when neither an {@code iat} nor a TTL is known, or they contradict
     */
    public static IssuedToken fromResponse(String token, Instant expirationTimestamp, Long requestedSeconds) {
        Instant iat = jwtIssuedAt(token);
        if (iat == null) {
            if (requestedSeconds == null) {
                throw new IllegalArgumentException(
                        "token response: neither a JWT iat claim nor spec.expirationSeconds is present");
            }
            iat = expirationTimestamp.minusSeconds(requestedSeconds);
        }
        return new IssuedToken(token, iat, expirationTimestamp);
    }

    private static Instant jwtIssuedAt(String token) {
        try {
            Date iat = JWTParser.parse(token).getJWTClaimsSet().getIssueTime();
            return iat == null ? null : iat.toInstant();
        } catch (ParseException e) {
            return null; // not a JWT (opaque token): fall back to the requested TTL
        }
    }

    public Duration ttl() {
        return Duration.between(issuedAt, expiresAt);
    }

    /** TM-7: expired means strictly after the expiration instant. */
    public boolean isExpired(Instant now) {
        return now.isAfter(expiresAt);
    }

    @Override
    public String toString() {
        return "IssuedToken[token=<redacted>, issuedAt=" + issuedAt + ", expiresAt=" + expiresAt + "]";
    }
}
