package io.satoken.e2e;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.Base64;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The time claims of a token a test read from disk ({@code iat}, {@code exp}), decoded from the JWT's
 * payload without verifying it. The token itself is never kept here, so a claims value can be printed.
 */
record JwtClaims(Instant issuedAt, Instant expiresAt) {

    private static final Pattern IAT = Pattern.compile("\"iat\"\\s*:\\s*(\\d+)");
    private static final Pattern EXP = Pattern.compile("\"exp\"\\s*:\\s*(\\d+)");

    /** Decodes a compact JWT's payload; fails without quoting the token. */
    static JwtClaims of(String token) {
        String[] parts = token.strip().split("\\.");
        if (parts.length != 3) {
            throw new IllegalArgumentException("not a compact JWT: " + parts.length + " parts");
        }
        String payload = new String(Base64.getUrlDecoder().decode(parts[1]), StandardCharsets.UTF_8);
        return new JwtClaims(Instant.ofEpochSecond(claim(payload, IAT, "iat")),
                Instant.ofEpochSecond(claim(payload, EXP, "exp")));
    }

    /** {@code exp - iat}. */
    Duration lifetime() {
        return Duration.between(issuedAt, expiresAt);
    }

    private static long claim(String payload, Pattern pattern, String name) {
        Matcher m = pattern.matcher(payload);
        if (!m.find()) {
            throw new IllegalArgumentException("the JWT has no numeric " + name + " claim");
        }
        return Long.parseLong(m.group(1));
    }
}
