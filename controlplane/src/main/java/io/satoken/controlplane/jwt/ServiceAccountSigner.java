package io.satoken.controlplane.jwt;

import com.nimbusds.jose.JOSEException;
import com.nimbusds.jose.JWSAlgorithm;
import com.nimbusds.jose.JWSHeader;
import com.nimbusds.jose.JWSObject;
import com.nimbusds.jose.JWSSigner;
import com.nimbusds.jose.Payload;
import com.nimbusds.jose.crypto.ECDSASigner;
import com.nimbusds.jose.crypto.RSASSASigner;
import com.nimbusds.jose.crypto.opts.AllowWeakRSAKey;
import com.nimbusds.jose.jwk.Curve;
import com.nimbusds.jose.util.Base64URL;
import com.nimbusds.jose.util.JSONObjectUtils;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.security.PrivateKey;
import java.security.PublicKey;
import java.security.interfaces.ECPrivateKey;
import java.security.interfaces.RSAPrivateCrtKey;
import java.text.ParseException;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;

/**
 * Signs legacy (Secret-based) ServiceAccount tokens so that kube-apiserver, given the matching public key
 * in {@code --service-account-key-file}, accepts them exactly as it accepts kube-controller-manager's.
 *
 * <p>Three things must match upstream for that: the algorithm chosen from the key (RSA → RS256; EC P-256,
 * P-384, P-521 → ES256, ES384, ES512, signatures in JOSE's R||S form), the {@code kid} header (see
 * {@link #keyId()}), and the claims (spec 4b). The header is byte-for-byte what go-jose writes:
 * {@code {"alg":…,"kid":…}}, no {@code typ}; the payload's keys are in the sorted order Go's
 * {@code encoding/json} gives a map, so a token from either side reads the same.
 *
 * <p>RSA keys of any size are accepted, as kube-apiserver v1.26 accepts them; refusing short keys here
 * would break clusters that still use one, and the choice of key belongs to whoever made the file. (nimbus
 * refuses keys under 2048 bits unless told otherwise.)
 *
 * <p>Instances are immutable and thread-safe; the tokens controller signs from several workers with one.
 * All per-key work (public key, kid, encoded header, the nimbus {@link JWSSigner}) is done once here, so a
 * token costs one JSON serialisation and one signature.
 */
public final class ServiceAccountSigner implements LegacyTokenGenerator {

    /** CL-1: the issuer of every legacy token, fixed by upstream (serviceaccount.LegacyIssuer). */
    public static final String LEGACY_ISSUER = "kubernetes/serviceaccount";

    private static final String CLAIM_PREFIX = "kubernetes.io/serviceaccount/";

    private final JWSAlgorithm algorithm;
    private final PublicKey publicKey;
    private final String keyId;
    private final JWSHeader header;
    private final JWSSigner signer;

    private ServiceAccountSigner(JWSAlgorithm algorithm, PublicKey publicKey, JWSSigner signer) {
        this.algorithm = algorithm;
        this.publicKey = publicKey;
        this.keyId = keyIdOf(publicKey);
        this.header = encodedHeader(algorithm, keyId);
        this.signer = signer;
    }

    /**
     * Reads the first private key of a PEM file (PKCS#1, PKCS#8 or SEC1), as kube-controller-manager reads
     * {@code --service-account-private-key-file}.
     */
    public static ServiceAccountSigner load(Path pemFile) throws KeyFileException {
        PrivateKey key = PrivateKeyPem.read(pemFile);
        try {
            return of(key);
        } catch (IllegalArgumentException e) {
            throw new KeyFileException(pemFile, e.getMessage());
        }
    }

    /**
     * A signer for a key already in memory (tests, benchmarks). The public key is always derived from the
     * private one, never taken from the caller or the file, so the kid cannot describe another key.
     *
     * @throws IllegalArgumentException for a key kube-apiserver could not verify tokens of
     */
    public static ServiceAccountSigner of(PrivateKey privateKey) {
        try {
            if (privateKey instanceof RSAPrivateCrtKey rsa) {
                RSASSASigner signer = new RSASSASigner(rsa, Set.of(AllowWeakRSAKey.getInstance()));
                return new ServiceAccountSigner(JWSAlgorithm.RS256, PublicKeyDerivation.of(rsa), signer);
            }
            if (privateKey instanceof ECPrivateKey ec) {
                Curve curve = Curve.forECParameterSpec(ec.getParams());
                JWSAlgorithm alg = curve == null ? null : switch (curve.getName()) {
                    case "P-256" -> JWSAlgorithm.ES256;
                    case "P-384" -> JWSAlgorithm.ES384;
                    case "P-521" -> JWSAlgorithm.ES512;
                    default -> null;
                };
                if (alg == null) {
                    throw new IllegalArgumentException("EC curve " + (curve == null ? "(unnamed)" : curve.getStdName())
                            + " is not supported (want P-256, P-384 or P-521)");
                }
                return new ServiceAccountSigner(alg, PublicKeyDerivation.of(ec, curve), new ECDSASigner(ec));
            }
        } catch (JOSEException e) {
            throw new IllegalArgumentException("the key cannot sign (" + e.getMessage() + ")", e);
        }
        if (privateKey.getAlgorithm().equals("RSA")) {
            // PKCS#1 and PKCS#8 always carry them; only a key built in memory can lack them
            throw new IllegalArgumentException(
                    "RSA private key without its CRT fields: the public key cannot be derived");
        }
        throw new IllegalArgumentException(
                "unsupported key type " + privateKey.getAlgorithm() + " (" + PrivateKeyPem.WANT + ")");
    }

    /** CL-1..CL-3, and nothing else: no exp, iat, nbf, aud or jti. */
    @Override
    public String generate(LegacyClaims claims) throws TokenGenerationException {
        // sorted keys, as Go's encoding/json writes the claims map upstream
        Map<String, Object> payload = new LinkedHashMap<>();
        payload.put("iss", LEGACY_ISSUER);
        payload.put(CLAIM_PREFIX + "namespace", claims.namespace());
        payload.put(CLAIM_PREFIX + "secret.name", claims.secretName());
        payload.put(CLAIM_PREFIX + "service-account.name", claims.serviceAccountName());
        payload.put(CLAIM_PREFIX + "service-account.uid", claims.serviceAccountUid());
        payload.put("sub", claims.subject());
        // serialised here: nimbus's Payload(Map) copies the map into one that forgets the order
        JWSObject jws = new JWSObject(header, new Payload(JSONObjectUtils.toJSONString(payload)));
        try {
            jws.sign(signer);
        } catch (JOSEException e) {
            throw new TokenGenerationException("signing the token of ServiceAccount " + claims.namespace() + "/"
                    + claims.serviceAccountName() + " failed (" + algorithm + ")", e);
        }
        return jws.serialize();
    }

    /** The JWS algorithm chosen from the key: RS256, ES256, ES384 or ES512. */
    public String algorithm() {
        return algorithm.getName();
    }

    /** The public key to give kube-apiserver's {@code --service-account-key-file}. */
    public PublicKey publicKey() {
        return publicKey;
    }

    /**
     * The {@code kid} header, derived as kube-apiserver's {@code keyIDFromPublicKey} does: SHA-256 of the
     * public key's DER SubjectPublicKeyInfo, base64url without padding. Newer kube-apiservers choose the
     * verification key by this ID and reject a token whose kid names none of theirs ("no keys found"); v1.26
     * still tries every key, so there a wrong kid would go unnoticed until the next upgrade. Java's X.509
     * encoding is the one Go's {@code x509.MarshalPKIXPublicKey} writes (RSA with NULL parameters; EC with
     * the curve's OID and an uncompressed point), which {@link PublicKeyDerivation} checks for EC.
     */
    public String keyId() {
        return keyId;
    }

    @Override
    public String toString() {
        return "ServiceAccountSigner[" + algorithm + ", kid=" + keyId + "]";
    }

    private static String keyIdOf(PublicKey publicKey) {
        try {
            byte[] hash = MessageDigest.getInstance("SHA-256").digest(publicKey.getEncoded());
            return Base64.getUrlEncoder().withoutPadding().encodeToString(hash);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("every JRE has SHA-256", e);
        }
    }

    /**
     * The header, parsed from the exact bytes go-jose writes. A parsed header keeps its encoded form, so
     * nimbus reuses it for every token instead of re-serialising the same JSON.
     */
    private static JWSHeader encodedHeader(JWSAlgorithm algorithm, String keyId) {
        // alg and kid need no JSON escaping: a fixed name and a base64url string
        String json = "{\"alg\":\"" + algorithm.getName() + "\",\"kid\":\"" + keyId + "\"}";
        try {
            return JWSHeader.parse(Base64URL.encode(json.getBytes(StandardCharsets.UTF_8)));
        } catch (ParseException e) {
            throw new IllegalStateException("header " + json, e);
        }
    }
}
