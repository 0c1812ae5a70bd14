package io.satoken.controlplane.jwt;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.google.gson.Gson;
import io.satoken.controlplane.testing.TestKeys;
import java.nio.charset.StandardCharsets;
import java.security.KeyPairGenerator;
import java.security.Signature;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Every accepted key file signs a legacy token that carries exactly the CL-1..CL-3 claims, the upstream
 * header and kid, and a signature that verifies with the derived public key. Tokens are checked piece by
 * piece and never printed.
 */
class ServiceAccountSignerTest {

    private static final LegacyClaims CLAIMS =
            new LegacyClaims("team-a", "builder", "0b4b6d1c-5b47-4a8e-9c3e-6f1d2a7b9e10", "builder-token-x7k2q");

    /**
     * The kid vectors come from openssl, not from the code under test, computed once per key file with
     * {@code openssl pkey -in F -pubout -outform DER | openssl dgst -sha256 -binary | basenc --base64url}
     * (padding removed): the same SHA-256 of the DER SubjectPublicKeyInfo as upstream's keyIDFromPublicKey.
     */
    record Signs(String name, String file, String alg, String kid, String jcaAlgorithm, int signatureBytes) {
        @Override
        public String toString() {
            return name;
        }
    }

    static Stream<Signs> keyFiles() {
        String rsaKid = "PfBOM_zyCltkb5lqQvRfli8aL2ClEZMTrOVzvRDi6aI";
        String p256Kid = "jBWsz-Xl8BPFgYIYw84Azl2rktOmfmJ8vf0WWZ-BZGY";
        String p384Kid = "6igrdK_XPx73TjaceGLrwV4fQ_9gbxGRx7zd1miHDdg";
        return Stream.of(
                new Signs("RSA 2048 PKCS#1", "rsa-pkcs1.pem", "RS256", rsaKid, "SHA256withRSA", 256),
                new Signs("RSA 2048 PKCS#8, same key, same kid", "rsa-pkcs8.pem", "RS256", rsaKid,
                        "SHA256withRSA", 256),
                // kube-apiserver accepts any RSA size, so we do too
                new Signs("RSA 1024 PKCS#1", "rsa-1024-pkcs1.pem", "RS256",
                        "lAh3Xg09NsnM1bPld59p_9bVap0FNjpK1ZV_gx8GxtA", "SHA256withRSA", 128),
                new Signs("EC P-256 SEC1", "ec-p256-sec1.pem", "ES256", p256Kid, "SHA256withECDSAinP1363Format", 64),
                new Signs("EC P-256 PKCS#8, same key, same kid", "ec-p256-pkcs8.pem", "ES256", p256Kid,
                        "SHA256withECDSAinP1363Format", 64),
                new Signs("EC P-256 SEC1 after EC PARAMETERS", "ec-p256-sec1-params.pem", "ES256",
                        "qCLIV9lhz9ho59ZwXivC1nrZCPREcT4o-SU0Im9dPFE", "SHA256withECDSAinP1363Format", 64),
                new Signs("EC P-384 SEC1", "ec-p384-sec1.pem", "ES384", p384Kid, "SHA384withECDSAinP1363Format", 96),
                new Signs("EC P-384 SEC1 after EC PARAMETERS", "ec-p384-sec1-params.pem", "ES384",
                        "R5jmOWwkEBoZoJVjFN-cPxTur5_cifs8_6QrKb487_M", "SHA384withECDSAinP1363Format", 96),
                // P-521: R and S are 66 bytes each, not 65.25, in JOSE form
                new Signs("EC P-521 SEC1", "ec-p521-sec1.pem", "ES512",
                        "S9_yMdl_lxIX0inwr6GqtzFD2B0w8NvK3Z6IIZbbS8A", "SHA512withECDSAinP1363Format", 132),
                new Signs("EC P-521 SEC1 after EC PARAMETERS", "ec-p521-sec1-params.pem", "ES512",
                        "OiaATVQYfvVSd28_SYl6LTNBT__cDoIVVa2bT_8I0IQ", "SHA512withECDSAinP1363Format", 132),
                new Signs("a certificate before the key is skipped", "certificate-then-ec-p384.pem", "ES384", p384Kid,
                        "SHA384withECDSAinP1363Format", 96),
                new Signs("the first of two keys is used", "ec-p256-then-rsa.pem", "ES256", p256Kid,
                        "SHA256withECDSAinP1363Format", 64));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("keyFiles")
    void keyFile_signsAVerifiableTokenWithUpstreamHeaderAndClaims(Signs c) throws Exception {
        ServiceAccountSigner signer = ServiceAccountSigner.load(TestKeys.path(c.file()));
        assertThat(signer.algorithm()).isEqualTo(c.alg());
        assertThat(signer.keyId()).isEqualTo(c.kid());

        String[] parts = signer.generate(CLAIMS).split("\\.", -1);
        assertThat(parts.length).isEqualTo(3);
        // go-jose's header: alg and kid, no typ
        assertThat(decode(parts[0])).isEqualTo("{\"alg\":\"" + c.alg() + "\",\"kid\":\"" + c.kid() + "\"}");
        assertThat(claimsOf(parts[1])).isEqualTo(expectedClaims());

        byte[] signature = Base64.getUrlDecoder().decode(parts[2]);
        assertThat(signature.length).as("JOSE signature length").isEqualTo(c.signatureBytes());
        Signature jca = Signature.getInstance(c.jcaAlgorithm());
        jca.initVerify(signer.publicKey());
        jca.update((parts[0] + "." + parts[1]).getBytes(StandardCharsets.US_ASCII));
        assertThat(jca.verify(signature)).as("signature verifies with the public key").isTrue();
        assertThat(parts[2].matches("[A-Za-z0-9_-]+")).as("signature is base64url without padding").isTrue();
    }

    @Test
    void payload_hasTheSortedKeyOrderOfGosEncodingJson() throws Exception {
        String[] parts = ServiceAccountSigner.load(TestKeys.path("ec-p256-sec1.pem")).generate(CLAIMS).split("\\.");
        assertThat(decode(parts[1])).isEqualTo("{"
                + "\"iss\":\"kubernetes/serviceaccount\","
                + "\"kubernetes.io/serviceaccount/namespace\":\"team-a\","
                + "\"kubernetes.io/serviceaccount/secret.name\":\"builder-token-x7k2q\","
                + "\"kubernetes.io/serviceaccount/service-account.name\":\"builder\","
                + "\"kubernetes.io/serviceaccount/service-account.uid\":\"0b4b6d1c-5b47-4a8e-9c3e-6f1d2a7b9e10\","
                + "\"sub\":\"system:serviceaccount:team-a:builder\"}");
    }

    @Test
    void concurrentSigning_everyTokenCarriesItsOwnClaimsAndVerifies() throws Exception {
        ServiceAccountSigner signer = ServiceAccountSigner.load(TestKeys.path("ec-p256-sec1.pem"));
        ExecutorService pool = Executors.newFixedThreadPool(4);
        try {
            List<Future<Boolean>> results = new ArrayList<>();
            for (int i = 0; i < 200; i++) {
                LegacyClaims claims = new LegacyClaims("ns-" + i % 7, "sa-" + i, "uid-" + i, "sa-" + i + "-token");
                results.add(pool.submit(() -> {
                    String[] parts = signer.generate(claims).split("\\.");
                    Signature jca = Signature.getInstance("SHA256withECDSAinP1363Format");
                    jca.initVerify(signer.publicKey());
                    jca.update((parts[0] + "." + parts[1]).getBytes(StandardCharsets.US_ASCII));
                    return jca.verify(Base64.getUrlDecoder().decode(parts[2]))
                            && claimsOf(parts[1]).get("sub").equals(claims.subject());
                }));
            }
            for (Future<Boolean> result : results) {
                assertThat(result.get()).isTrue();
            }
        } finally {
            pool.shutdownNow();
        }
    }

    @Test
    void of_derivesThePublicKeyFromThePrivateKey() throws Exception {
        var pair = KeyPairGenerator.getInstance("EC");
        pair.initialize(384);
        var keys = pair.generateKeyPair();
        ServiceAccountSigner signer = ServiceAccountSigner.of(keys.getPrivate());
        assertThat(signer.algorithm()).isEqualTo("ES384");
        assertThat(signer.publicKey().getEncoded()).isEqualTo(keys.getPublic().getEncoded());
    }

    @Test
    void of_keyKubeApiServerCannotVerify_isRejected() throws Exception {
        var ed25519 = KeyPairGenerator.getInstance("Ed25519").generateKeyPair().getPrivate();
        assertThatThrownBy(() -> ServiceAccountSigner.of(ed25519))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("unsupported key type EdDSA (want RSA or EC P-256/P-384/P-521)");
    }

    @Test
    void toString_namesAlgorithmAndKidOnly() throws Exception {
        ServiceAccountSigner signer = ServiceAccountSigner.load(TestKeys.path("rsa-pkcs1.pem"));
        assertThat(signer).hasToString("ServiceAccountSigner[RS256, kid=PfBOM_zyCltkb5lqQvRfli8aL2ClEZMTrOVzvRDi6aI]");
    }

    /** CL-1 iss; CL-2 sub; CL-3 the four flat private claims; and nothing else (no exp, iat, nbf, aud, jti). */
    private static Map<String, Object> expectedClaims() {
        return Map.of(
                "iss", "kubernetes/serviceaccount", // CL-1
                "sub", "system:serviceaccount:team-a:builder", // CL-2
                "kubernetes.io/serviceaccount/namespace", "team-a", // CL-3
                "kubernetes.io/serviceaccount/secret.name", "builder-token-x7k2q",
                "kubernetes.io/serviceaccount/service-account.name", "builder",
                "kubernetes.io/serviceaccount/service-account.uid", "0b4b6d1c-5b47-4a8e-9c3e-6f1d2a7b9e10");
    }

    @SuppressWarnings("unchecked")
    private static Map<String, Object> claimsOf(String payload) {
        return new Gson().fromJson(decode(payload), Map.class);
    }

    private static String decode(String base64url) {
        return new String(Base64.getUrlDecoder().decode(base64url), StandardCharsets.UTF_8);
    }
}
