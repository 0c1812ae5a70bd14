package io.satoken.e2e;

import com.nimbusds.jose.JOSEException;
import com.nimbusds.jose.JWSAlgorithm;
import com.nimbusds.jose.JWSVerifier;
import com.nimbusds.jose.crypto.ECDSAVerifier;
import com.nimbusds.jose.jwk.ECKey;
import com.nimbusds.jose.jwk.JWK;
import com.nimbusds.jose.jwk.JWKSet;
import com.nimbusds.jwt.JWTClaimsSet;
import com.nimbusds.jwt.SignedJWT;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.text.ParseException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;

/**
 * What the e2e tests know about {@code satoken-agent demo}'s output: the token file of each example name,
 * the audience that name's token must carry, the issuer's JWKS, and one reader-side judgement of a token
 * file ({@link Verdict}) that never puts the token anywhere but {@link IssuedTokens}, and how many writes
 * and rotations a run has reported (its output lines).
 */
final class DemoTokens {

    /** DemoCommand's examples: directory name to audience; names past the fifth carry a {@code -i} suffix on both. */
    private static final Map<String, String> AUDIENCES = Map.of(
            "vault", "vault",
            "api", "https://kubernetes.default.svc",
            "sts", "sts.amazonaws.com",
            "db", "postgres",
            "queue", "nats");

    /** ES256 signatures are r||s, 32 bytes each: a shorter one is a cut-off token. */
    private static final int ES256_SIGNATURE_BYTES = 64;

    /** How a read of one token file went. */
    enum Verdict {
        OK,
        /** ENOENT: the name or what it points to was not there. */
        MISSING,
        /** Zero bytes. */
        EMPTY,
        /** Some bytes, but not a whole JWS (does not parse, or its signature is cut short). */
        PARTIAL,
        /** A whole JWS whose claims are wrong for this file: no exp, or another audience. */
        WRONG_CLAIMS,
        /** A whole JWS the issuer's keys do not verify. */
        BAD_SIGNATURE,
        /** Any other I/O error. */
        IO_ERROR
    }

    private DemoTokens() {
    }

    /** The audience the demo puts in the token at {@code <name>/token}. */
    static String audienceFor(String name) {
        int dash = name.indexOf('-');
        String base = dash < 0 ? name : name.substring(0, dash);
        String suffix = dash < 0 ? "" : name.substring(dash);
        String audience = AUDIENCES.get(base);
        if (audience == null) {
            throw new IllegalArgumentException("not a demo token name: " + name);
        }
        return audience + suffix;
    }

    /** The demo's names for {@code n} tokens, in DemoCommand's order. */
    static List<String> names(int n) {
        List<String> base = List.of("vault", "api", "sts", "db", "queue");
        List<String> names = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            names.add(base.get(i % base.size()) + (i < base.size() ? "" : "-" + i));
        }
        return names;
    }

    /** Every entry of {@code dir}, sorted; empty when it does not exist. */
    static TreeSet<String> entries(Path dir) {
        TreeSet<String> names = new TreeSet<>();
        try (DirectoryStream<Path> s = Files.newDirectoryStream(dir)) {
            s.forEach(p -> names.add(p.getFileName().toString()));
        } catch (NoSuchFileException e) {
            return names;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return names;
    }

    /** Verifiers for every key of the JWKS file (the demo writes one EC key per run). */
    static List<JWSVerifier> verifiers(Path jwksFile) {
        try {
            List<JWSVerifier> verifiers = new ArrayList<>();
            for (JWK key : JWKSet.parse(Files.readString(jwksFile, StandardCharsets.UTF_8)).getKeys()) {
                verifiers.add(new ECDSAVerifier((ECKey) key));
            }
            return verifiers;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (ParseException | JOSEException e) {
            throw new IllegalStateException(jwksFile + ": not a JWKS of EC keys: " + e.getMessage(), e);
        }
    }

    /**
     * Reads {@code file} as a reader of the token would and judges it. {@code verifiers} null: the
     * signature is not checked (only its length); else one of them must verify it.
     */
    static Verdict check(Path file, String audience, List<JWSVerifier> verifiers) {
        String token;
        try {
            token = IssuedTokens.read(file);
        } catch (UncheckedIOException e) {
            return e.getCause() instanceof NoSuchFileException ? Verdict.MISSING : Verdict.IO_ERROR;
        }
        if (token.isEmpty()) {
            return Verdict.EMPTY;
        }
        SignedJWT jwt;
        JWTClaimsSet claims;
        try {
            jwt = SignedJWT.parse(token);
            claims = jwt.getJWTClaimsSet();
        } catch (ParseException e) {
            return Verdict.PARTIAL;
        }
        if (!JWSAlgorithm.ES256.equals(jwt.getHeader().getAlgorithm())
                || jwt.getSignature().decode().length != ES256_SIGNATURE_BYTES) {
            return Verdict.PARTIAL;
        }
        if (claims.getExpirationTime() == null || !List.of(audience).equals(claims.getAudience())) {
            return Verdict.WRONG_CLAIMS;
        }
        if (verifiers != null && !verifiedByAny(jwt, verifiers)) {
            return Verdict.BAD_SIGNATURE;
        }
        return Verdict.OK;
    }

    private static boolean verifiedByAny(SignedJWT jwt, List<JWSVerifier> verifiers) {
        for (JWSVerifier v : verifiers) {
            try {
                if (jwt.verify(v)) {
                    return true;
                }
            } catch (JOSEException e) {
                // not this key's kind; try the next
            }
        }
        return false;
    }

    /**
     * Lines of this run's output holding {@code marker} (" wrote " or " rotated "): those after the banner
     * naming {@code dir}, since a log of an earlier build's run with the same number is appended to, not replaced.
     */
    static long count(SatokenProcess demo, Path dir, String marker) throws IOException {
        List<String> lines = Files.readAllLines(demo.log());
        String banner = "writing under " + dir.resolve("tokens") + " ";
        int start = lines.size();
        for (int i = 0; i < lines.size(); i++) {
            if (lines.get(i).startsWith("satoken-agent demo: ") && lines.get(i).contains(banner)) {
                start = i;
            }
        }
        return lines.subList(start, lines.size()).stream().filter(l -> l.contains(marker)).count();
    }
}
