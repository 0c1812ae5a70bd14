package io.satoken.agent.cli;

import com.nimbusds.jose.JOSEException;
import com.nimbusds.jose.JWSAlgorithm;
import com.nimbusds.jose.JWSHeader;
import com.nimbusds.jose.jwk.JWK;
import com.nimbusds.jose.jwk.JWKMatcher;
import com.nimbusds.jose.jwk.JWKSelector;
import com.nimbusds.jose.jwk.JWKSet;
import com.nimbusds.jose.jwk.source.ImmutableJWKSet;
import com.nimbusds.jose.proc.BadJOSEException;
import com.nimbusds.jose.proc.BadJWSException;
import com.nimbusds.jose.proc.JWSVerificationKeySelector;
import com.nimbusds.jose.proc.SecurityContext;
import com.nimbusds.jwt.JWTClaimsSet;
import com.nimbusds.jwt.SignedJWT;
import com.nimbusds.jwt.proc.BadJWTException;
import com.nimbusds.jwt.proc.DefaultJWTProcessor;
import io.satoken.common.paths.FileErrors;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.text.ParseException;
import java.time.Duration;
import java.time.Instant;
import java.time.InstantSource;
import java.util.Collections;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

/**
 * {@code satoken-agent verify}: checks a token file the way kube-apiserver's ServiceAccount token
 * authenticator would, against a JWKS instead of the API server's keys: signature by the key the
 * token's {@code kid} names, at least one wanted audience, and {@code exp}/{@code nbf}/{@code iat} with
 * one minute of leeway (CL-8). Prints one line either way and never the token.
 */
@Command(
        name = "verify",
        mixinStandardHelpOptions = true,
        description = "Verifies a token file against a JWKS: signature, audience and validity period.",
        exitCodeListHeading = "%nExit codes:%n",
        exitCodeList = {"0:the token is valid", "1:the token is not valid, or a file cannot be read", "2:bad usage"},
        footerHeading = "%nExamples:%n",
        footer = {
            "  # A demo token (satoken-agent demo)",
            "  satoken-agent verify --jwks satoken-demo/jwks.json \\",
            "      --audience vault satoken-demo/tokens/vault/token",
            "  # A pod's token; jwks.json from kubectl get --raw /openid/v1/jwks",
            "  satoken-agent verify --jwks jwks.json \\",
            "      --audience vault /var/run/secrets/satoken/vault/token"})
final class VerifyCommand implements Callable<Integer> {

    /** CL-8: go-jose's default leeway, which kube-apiserver uses for the time claims. */
    static final Duration CLOCK_SKEW = Duration.ofSeconds(60);

    /** What Kubernetes signs ServiceAccount tokens with (RSA keys → RS256, EC keys → ES256/384/512). */
    static final Set<JWSAlgorithm> ALGORITHMS =
            Set.of(JWSAlgorithm.RS256, JWSAlgorithm.ES256, JWSAlgorithm.ES384, JWSAlgorithm.ES512);

    @Spec
    CommandSpec spec;

    @Option(names = "--jwks", required = true, paramLabel = "FILE", description = "JWKS file with the public keys.")
    Path jwksFile;

    @Option(names = "--audience", required = true, paramLabel = "AUD",
            description = "An accepted audience; repeatable. The token must carry at least one.")
    List<String> audiences;

    @Parameters(index = "0", arity = "1", paramLabel = "TOKEN_FILE", description = "File holding the token.")
    Path tokenFile;

    private final InstantSource clock;

    VerifyCommand() {
        this(InstantSource.system());
    }

    VerifyCommand(InstantSource clock) {
        this.clock = Objects.requireNonNull(clock, "clock");
    }

    @Override
    public Integer call() {
        try {
            SignedJWT jwt = parseToken();
            JWTClaimsSet claims = verify(jwt, readJwks());
            String kid = jwt.getHeader().getKeyID();
            spec.commandLine().getOut().println("OK subject=" + claims.getSubject()
                    + " audiences=" + claims.getAudience()
                    + " expires=" + claims.getExpirationTime().toInstant()
                    + " kid=" + (kid == null ? "none" : kid));
            return 0;
        } catch (Rejected e) {
            spec.commandLine().getErr().println(spec.qualifiedName() + ": " + e.getMessage());
            return 1;
        }
    }

    /** Returns the verified claims, or throws with the one reason the token is refused. */
    private JWTClaimsSet verify(SignedJWT jwt, JWKSet jwks) throws Rejected {
        checkKeyExists(jwt.getHeader(), jwks);
        DefaultJWTProcessor<SecurityContext> processor = new DefaultJWTProcessor<>();
        processor.setJWSKeySelector(new JWSVerificationKeySelector<>(ALGORITHMS, new ImmutableJWKSet<>(jwks)));
        processor.setJWTClaimsSetVerifier((claims, context) -> checkClaims(claims));
        try {
            return processor.process(jwt, null);
        } catch (BadJWSException e) {
            throw new Rejected("bad signature");
        } catch (BadJWTException e) {
            throw new Rejected(e.getMessage()); // our own reasons from checkClaims
        } catch (BadJOSEException | JOSEException e) {
            throw new Rejected("cannot verify: " + e.getMessage());
        }
    }

    /** Names the key problem precisely; the processor would only say "no matching key(s)". */
    private void checkKeyExists(JWSHeader header, JWKSet jwks) throws Rejected {
        JWSAlgorithm alg = header.getAlgorithm();
        if (!ALGORITHMS.contains(alg)) {
            throw new Rejected("unsupported algorithm " + alg + ", want RS256, ES256, ES384 or ES512");
        }
        List<JWK> candidates = new JWKSelector(JWKMatcher.forJWSHeader(header)).select(jwks);
        if (!candidates.isEmpty()) {
            return;
        }
        String kid = header.getKeyID();
        if (kid == null) {
            throw new Rejected("token has no kid and no key in " + jwksFile + " fits " + alg);
        }
        if (jwks.getKeyByKeyId(kid) == null) {
            throw new Rejected("no key with kid \"" + kid + "\" in " + jwksFile);
        }
        throw new Rejected("key with kid \"" + kid + "\" in " + jwksFile + " cannot verify " + alg);
    }

    /** Audience first, as kube-apiserver checks it before the time claims. */
    private void checkClaims(JWTClaimsSet claims) throws BadJWTException {
        List<String> tokenAudiences = claims.getAudience();
        if (Collections.disjoint(tokenAudiences, audiences)) {
            throw new BadJWTException("wrong audience: token has " + tokenAudiences + ", want one of " + audiences);
        }
        Instant now = clock.instant();
        if (claims.getExpirationTime() == null) {
            throw new BadJWTException("no expiry: the token has no exp claim");
        }
        Instant exp = claims.getExpirationTime().toInstant();
        if (now.minus(CLOCK_SKEW).isAfter(exp)) {
            throw new BadJWTException("expired at " + exp);
        }
        if (claims.getNotBeforeTime() != null) {
            Instant nbf = claims.getNotBeforeTime().toInstant();
            if (now.plus(CLOCK_SKEW).isBefore(nbf)) {
                throw new BadJWTException("not valid before " + nbf);
            }
        }
        if (claims.getIssueTime() != null) {
            Instant iat = claims.getIssueTime().toInstant();
            if (now.plus(CLOCK_SKEW).isBefore(iat)) {
                throw new BadJWTException("issued in the future at " + iat);
            }
        }
    }

    private JWKSet readJwks() throws Rejected {
        String json = read(jwksFile);
        try {
            return JWKSet.parse(json);
        } catch (ParseException e) {
            throw new Rejected("invalid JWKS " + jwksFile + ": " + e.getMessage());
        }
    }

    /** Reads and parses the token file; the token text never goes into a message. */
    private SignedJWT parseToken() throws Rejected {
        String text = read(tokenFile).strip();
        try {
            SignedJWT jwt = SignedJWT.parse(text);
            jwt.getJWTClaimsSet(); // a payload that is not a claims set is "not a JWT" too
            return jwt;
        } catch (ParseException e) {
            throw new Rejected("not a JWT: " + tokenFile);
        }
    }

    /** Bytes that are not UTF-8 are replaced, so a binary file is reported as "not a JWT". */
    private static String read(Path file) throws Rejected {
        try {
            return new String(Files.readAllBytes(file), StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new Rejected("cannot read " + file + ": " + FileErrors.reason(e));
        }
    }

    /** A reason to refuse the token; its message is the whole reason, without the token. */
    private static final class Rejected extends Exception {
        Rejected(String reason) {
            super(reason, null, false, false);
        }
    }
}
