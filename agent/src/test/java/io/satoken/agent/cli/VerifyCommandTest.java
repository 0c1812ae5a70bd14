package io.satoken.agent.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.nimbusds.jose.JWSAlgorithm;
import com.nimbusds.jose.JWSHeader;
import com.nimbusds.jose.JWSSigner;
import com.nimbusds.jose.crypto.ECDSASigner;
import com.nimbusds.jose.crypto.MACSigner;
import com.nimbusds.jose.crypto.RSASSASigner;
import com.nimbusds.jose.jwk.Curve;
import com.nimbusds.jose.jwk.JWK;
import com.nimbusds.jose.jwk.JWKSet;
import com.nimbusds.jose.jwk.gen.ECKeyGenerator;
import com.nimbusds.jose.jwk.gen.OctetSequenceKeyGenerator;
import com.nimbusds.jose.jwk.gen.RSAKeyGenerator;
import com.nimbusds.jose.util.Base64URL;
import com.nimbusds.jwt.JWTClaimsSet;
import com.nimbusds.jwt.SignedJWT;
import io.satoken.agent.token.BoundObjectRef;
import io.satoken.agent.token.IssuedToken;
import io.satoken.agent.token.LocalIssuer;
import io.satoken.agent.token.TokenKey;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.time.InstantSource;
import java.util.ArrayList;
import java.util.Date;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;
import picocli.CommandLine;

class VerifyCommandTest {

    private static final Instant ISSUED = Instant.parse("2025-03-01T12:00:00Z");
    private static final Instant EXPIRES = ISSUED.plusSeconds(600);
    private static final String ERR = "satoken-agent verify: ";

    @TempDir
    Path dir;

    private final LocalIssuer issuer = LocalIssuer.generate("https://satoken.local", InstantSource.fixed(ISSUED));
    /** Every token this test wrote; none may show up in any output. */
    private final List<String> tokens = new ArrayList<>();
    private Path jwks;
    private Path token;

    @BeforeEach
    void writeJwksAndToken() throws Exception {
        jwks = write("jwks.json", issuer.publicJwksJson());
        token = writeToken("token", issue(List.of("api", "vault")));
    }

    private record Result(int exit, String out, String err) {}

    private Result run(Instant now, String... args) {
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        CommandLine.IFactory factory = new CommandLine.IFactory() {
            @Override
            public <K> K create(Class<K> cls) throws Exception {
                return cls == VerifyCommand.class
                        ? cls.cast(new VerifyCommand(InstantSource.fixed(now)))
                        : CommandLine.defaultFactory().create(cls);
            }
        };
        int exit = AgentCommand.execute(factory, new PrintWriter(out, true), new PrintWriter(err, true), args);
        Result result = new Result(exit, out.toString(), err.toString());
        for (String t : tokens) {
            assertThat(result.out()).doesNotContain(t).doesNotContain(t.substring(t.lastIndexOf('.') + 1));
            assertThat(result.err()).doesNotContain(t).doesNotContain(t.substring(t.lastIndexOf('.') + 1));
        }
        return result;
    }

    private Result verify(Instant now, Path tokenFile, String... audiences) {
        List<String> args = new ArrayList<>(List.of("verify", "--jwks", jwks.toString()));
        for (String audience : audiences) {
            args.add("--audience");
            args.add(audience);
        }
        args.add(tokenFile.toString());
        return run(now, args.toArray(String[]::new));
    }

    private static void assertRejected(Result result, String reason) {
        assertThat(result.exit()).isEqualTo(1);
        assertThat(result.out()).isEmpty();
        assertThat(result.err()).isEqualTo(ERR + reason + System.lineSeparator());
    }

    private static void assertAccepted(Result result) {
        assertThat(result.err()).isEmpty();
        assertThat(result.exit()).isEqualTo(0);
        assertThat(result.out()).startsWith("OK ").hasLineCount(1);
    }

    private String issue(List<String> audiences) throws Exception {
        IssuedToken issued = issuer.issue(
                new TokenKey("team-a", "builder", audiences, 600, BoundObjectRef.pod("web-0", "uid-1")));
        return issued.token();
    }

    private Path write(String name, String content) throws Exception {
        return Files.writeString(dir.resolve(name), content);
    }

    private Path writeToken(String name, String jwt) throws Exception {
        tokens.add(jwt);
        return write(name, jwt + "\n");
    }

    @Test
    void verify_acceptedWithRightAudience() {
        Result result = verify(ISSUED, token, "vault");

        assertAccepted(result);
        assertThat(result.out()).isEqualTo("OK subject=system:serviceaccount:team-a:builder audiences=[api, vault]"
                + " expires=2025-03-01T12:10:00Z kid=" + issuer.keyId() + System.lineSeparator());
    }

    @Test
    void verify_acceptedWithOneOfSeveralAudiences() {
        assertAccepted(verify(ISSUED, token, "other", "api", "third"));
    }

    @Test
    void verify_acceptedWithSurroundingWhitespace() throws Exception {
        Path spaced = writeToken("spaced", "  \n" + issue(List.of("api")) + " \t");

        assertAccepted(verify(ISSUED, spaced, "api"));
    }

    @Test
    void audience_wrongIsRejected() {
        assertRejected(verify(ISSUED, token, "other", "more"),
                "wrong audience: token has [api, vault], want one of [other, more]");
    }

    @Test
    void signature_tamperedPayloadIsRejected() throws Exception {
        SignedJWT jwt = SignedJWT.parse(tokens.get(0));
        JWTClaimsSet forged = new JWTClaimsSet.Builder(jwt.getJWTClaimsSet())
                .subject("system:serviceaccount:kube-system:admin").build();
        String[] parts = tokens.get(0).split("\\.");
        Path tampered = writeToken("tampered",
                parts[0] + "." + Base64URL.encode(forged.toString()) + "." + parts[2]);

        assertRejected(verify(ISSUED, tampered, "api"), "bad signature");
    }

    @Test
    void signature_flippedCharacterIsRejected() throws Exception {
        String original = tokens.get(0);
        int i = original.lastIndexOf('.') + 20; // inside the signature, away from its padding bits
        char flipped = original.charAt(i) == 'A' ? 'B' : 'A';
        Path tampered = writeToken("tampered", original.substring(0, i) + flipped + original.substring(i + 1));

        assertRejected(verify(ISSUED, tampered, "api"), "bad signature");
    }

    @Test
    void expiry_pastSkewIsRejected() { // CL-8: one minute of leeway
        assertRejected(verify(EXPIRES.plusSeconds(61), token, "api"), "expired at " + EXPIRES);
    }

    @Test
    void expiry_withinSkewIsAccepted() { // CL-8
        assertAccepted(verify(EXPIRES.plusSeconds(60), token, "api"));
    }

    @Test
    void expiry_missingIsRejected() throws Exception {
        JWK key = new ECKeyGenerator(Curve.P_256).keyIDFromThumbprint(true).generate();
        jwks = write("other-jwks.json", new JWKSet(key).toPublicJWKSet().toString());
        JWTClaimsSet claims = new JWTClaimsSet.Builder().subject("x").audience("api").build();
        Path noExp = writeToken("no-exp", sign(claims, JWSAlgorithm.ES256, key, new ECDSASigner(key.toECKey())));

        assertRejected(verify(ISSUED, noExp, "api"), "no expiry: the token has no exp claim");
    }

    @Test
    void notBefore_pastSkewIsRejected() { // CL-8
        assertRejected(verify(ISSUED.minusSeconds(61), token, "api"), "not valid before " + ISSUED);
    }

    @Test
    void notBefore_withinSkewIsAccepted() { // CL-8
        assertAccepted(verify(ISSUED.minusSeconds(60), token, "api"));
    }

    @Test
    void tokenFile_notAJwtIsRejected() throws Exception {
        Path garbage = write("garbage", "secret-garbage.not-a.jwt\n");

        Result result = verify(ISSUED, garbage, "api");

        assertRejected(result, "not a JWT: " + garbage);
        assertThat(result.err()).doesNotContain("secret-garbage");
    }

    @Test
    void tokenFile_missingIsRejected() {
        Path missing = dir.resolve("missing");

        assertRejected(verify(ISSUED, missing, "api"), "cannot read " + missing + ": not found");
    }

    @Test
    void tokenFile_unreadableIsRejected() throws Exception {
        Path directory = Files.createDirectory(dir.resolve("a-directory"));

        Result result = verify(ISSUED, directory, "api");

        assertThat(result.exit()).isEqualTo(1);
        assertThat(result.err()).startsWith(ERR + "cannot read " + directory + ": ").hasLineCount(1);
    }

    @Test
    void kid_unknownIsRejected() throws Exception {
        LocalIssuer other = LocalIssuer.generate("https://satoken.local", InstantSource.fixed(ISSUED));
        String foreign = other.issue(new TokenKey("team-a", "builder", List.of("api"), 600, null)).token();
        Path foreignToken = writeToken("foreign", foreign);

        assertRejected(verify(ISSUED, foreignToken, "api"),
                "no key with kid \"" + other.keyId() + "\" in " + jwks);
    }

    @Test
    void jwks_invalidIsRejected() throws Exception {
        jwks = write("bad-jwks.json", "{\"keys\": 42}");

        Result result = verify(ISSUED, token, "api");

        assertThat(result.exit()).isEqualTo(1);
        assertThat(result.err()).startsWith(ERR + "invalid JWKS " + jwks + ": ").hasLineCount(1);
    }

    @Test
    void jwks_missingIsRejected() {
        jwks = dir.resolve("no-jwks.json");

        assertRejected(verify(ISSUED, token, "api"), "cannot read " + jwks + ": not found");
    }

    record Algorithm(JWSAlgorithm alg) {
        @Override
        public String toString() {
            return alg.getName();
        }
    }

    static Stream<Algorithm> algorithms() {
        return Stream.of(JWSAlgorithm.RS256, JWSAlgorithm.ES256, JWSAlgorithm.ES384, JWSAlgorithm.ES512)
                .map(Algorithm::new);
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("algorithms")
    void algorithm_kubernetesAlgorithmsVerify(Algorithm algorithm) throws Exception {
        JWSAlgorithm alg = algorithm.alg();
        JWK key;
        JWSSigner signer;
        if (alg == JWSAlgorithm.RS256) {
            key = new RSAKeyGenerator(2048).keyIDFromThumbprint(true).generate();
            signer = new RSASSASigner(key.toRSAKey());
        } else {
            key = new ECKeyGenerator(Curve.forJWSAlgorithm(alg).iterator().next()).keyIDFromThumbprint(true).generate();
            signer = new ECDSASigner(key.toECKey());
        }
        // The JWKS holds an unrelated key too, so the kid must pick the right one.
        jwks = write("multi-jwks.json", new JWKSet(List.of(key, JWKSet.parse(issuer.publicJwksJson()).getKeys().get(0)))
                .toPublicJWKSet().toString());
        JWTClaimsSet claims = new JWTClaimsSet.Builder()
                .subject("system:serviceaccount:default:x")
                .audience("api")
                .issueTime(Date.from(ISSUED))
                .expirationTime(Date.from(EXPIRES))
                .build();
        Path signed = writeToken("signed", sign(claims, alg, key, signer));

        Result result = verify(ISSUED, signed, "api");

        assertAccepted(result);
        assertThat(result.out()).endsWith(" kid=" + key.getKeyID() + System.lineSeparator());
    }

    @Test
    void algorithm_hmacIsRejected() throws Exception {
        JWK secret = new OctetSequenceKeyGenerator(256).keyID(issuer.keyId()).generate();
        JWTClaimsSet claims = new JWTClaimsSet.Builder().audience("api").expirationTime(Date.from(EXPIRES)).build();
        Path hmac = writeToken("hmac", sign(claims, JWSAlgorithm.HS256, secret, new MACSigner(secret.toOctetSequenceKey())));

        assertRejected(verify(ISSUED, hmac, "api"), "unsupported algorithm HS256, want RS256, ES256, ES384 or ES512");
    }

    private static String sign(JWTClaimsSet claims, JWSAlgorithm alg, JWK key, JWSSigner signer) throws Exception {
        SignedJWT jwt = new SignedJWT(new JWSHeader.Builder(alg).keyID(key.getKeyID()).build(), claims);
        jwt.sign(signer);
        return jwt.serialize();
    }

    @Test
    void usage_missingJwksIsOneLineExit2() {
        Result result = run(ISSUED, "verify", "--audience", "api", token.toString());

        assertThat(result.exit()).isEqualTo(2);
        assertThat(result.out()).isEmpty();
        assertThat(result.err()).startsWith("satoken-agent verify: ").contains("--jwks").hasLineCount(1);
    }

    @Test
    void usage_missingAudienceIsExit2() {
        Result result = run(ISSUED, "verify", "--jwks", jwks.toString(), token.toString());

        assertThat(result.exit()).isEqualTo(2);
        assertThat(result.err()).contains("--audience").hasLineCount(1);
    }

    @Test
    void usage_twoTokenFilesIsExit2() {
        Result result = run(ISSUED, "verify", "--jwks", jwks.toString(), "--audience", "api",
                token.toString(), token.toString());

        assertThat(result.exit()).isEqualTo(2);
        assertThat(result.err()).hasLineCount(1);
    }

    @Test
    void usage_helpIsExit0() {
        Result result = run(ISSUED, "verify", "--help");

        assertThat(result.exit()).isEqualTo(0);
        assertThat(result.out()).contains("--jwks", "--audience", "TOKEN_FILE");
    }

    @Test
    void defaultConstructor_usesSystemClock() throws Exception {
        // A token issued just now, checked through the public entry point and the default factory.
        LocalIssuer live = LocalIssuer.generate("https://satoken.local", InstantSource.system());
        Path liveToken = writeToken("live", live.issue(new TokenKey("ns", "sa", List.of("api"), 600, null)).token());
        jwks = write("live-jwks.json", live.publicJwksJson());
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();

        int exit = AgentCommand.execute(new PrintWriter(out, true), new PrintWriter(err, true),
                "verify", "--jwks", jwks.toString(), "--audience", "api", liveToken.toString());

        assertThat(err.toString()).isEmpty();
        assertThat(exit).isEqualTo(0);
        assertThat(out.toString()).startsWith("OK ").doesNotContain(tokens.get(tokens.size() - 1));
    }
}
