package io.satoken.agent.token;

import com.nimbusds.jose.JOSEException;
import com.nimbusds.jose.JWSAlgorithm;
import com.nimbusds.jose.JWSHeader;
import com.nimbusds.jose.crypto.ECDSASigner;
import com.nimbusds.jose.jwk.Curve;
import com.nimbusds.jose.jwk.ECKey;
import com.nimbusds.jose.jwk.JWKSet;
import com.nimbusds.jose.jwk.KeyUse;
import com.nimbusds.jose.jwk.gen.ECKeyGenerator;
import com.nimbusds.jose.util.JSONObjectUtils;
import com.nimbusds.jwt.JWTClaimsSet;
import com.nimbusds.jwt.SignedJWT;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.time.InstantSource;
import java.time.temporal.ChronoUnit;
import java.util.Date;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.UUID;

/**
 * Signs bound-style ServiceAccount tokens itself, for the demo and standalone mode where there is no
 * cluster to ask. The tokens carry the claims kube-apiserver puts in a TokenRequest token (CL-6, CL-7);
 * they are signed ES256 with a P-256 key made fresh for each issuer, whose public half
 * {@link #publicJwksJson()} publishes so that {@code satoken-agent verify} can check them.
 *
 * <p>There is no ServiceAccount registry here, so a service account's uid is derived from its
 * namespace and name: stable across runs, different between accounts.
 */
public final class LocalIssuer implements TokenSource {

    /** Used when a key asks for no audiences, as the API server substitutes its own (CL-6, PV-3). */
    public static final List<String> DEFAULT_AUDIENCES = List.of("https://kubernetes.default.svc");

    /** PV-2: a request without expirationSeconds gets one hour. */
    static final long DEFAULT_EXPIRATION_SECONDS = 3600;

    /** PV-5 / TM-C4: the API server refuses longer lifetimes; so do we (no lower bound, the demo uses 2 s). */
    static final long MAX_EXPIRATION_SECONDS = 1L << 32;

    private static final String KUBERNETES_CLAIM = "kubernetes.io";

    private final String issuer;
    private final List<String> defaultAudiences;
    private final InstantSource clock;
    private final ECKey signingKey;
    private final ECDSASigner signer;

    private LocalIssuer(String issuer, List<String> defaultAudiences, InstantSource clock, ECKey signingKey)
            throws JOSEException {
        this.issuer = issuer;
        this.defaultAudiences = defaultAudiences;
        this.clock = clock;
        this.signingKey = signingKey;
        this.signer = new ECDSASigner(signingKey);
    }

    /** An issuer with a fresh key whose tokens default to {@link #DEFAULT_AUDIENCES}. */
    public static LocalIssuer generate(String issuer, InstantSource clock) {
        return generate(issuer, DEFAULT_AUDIENCES, clock);
    }

    /**
     * An issuer with a fresh EC P-256 key; its {@code kid} is the key's RFC 7638 thumbprint.
     *
     * @param defaultAudiences the audiences of tokens whose key asks for none; must not be empty
     */
    public static LocalIssuer generate(String issuer, List<String> defaultAudiences, InstantSource clock) {
        Objects.requireNonNull(issuer, "issuer");
        Objects.requireNonNull(defaultAudiences, "defaultAudiences");
        Objects.requireNonNull(clock, "clock");
        if (issuer.isBlank()) {
            throw new IllegalArgumentException("issuer: must not be blank");
        }
        if (defaultAudiences.isEmpty()) {
            throw new IllegalArgumentException("defaultAudiences: must not be empty");
        }
        try {
            ECKey key = new ECKeyGenerator(Curve.P_256)
                    .keyUse(KeyUse.SIGNATURE)
                    .algorithm(JWSAlgorithm.ES256)
                    .keyIDFromThumbprint(true)
                    .generate();
            return new LocalIssuer(issuer, List.copyOf(defaultAudiences), clock, key);
        } catch (JOSEException e) {
            throw new IllegalStateException("cannot generate an EC P-256 signing key: " + e.getMessage(), e);
        }
    }

    @Override
    public IssuedToken issue(TokenKey key) throws TokenSourceException {
        long ttl = key.expirationSeconds() == 0 ? DEFAULT_EXPIRATION_SECONDS : key.expirationSeconds();
        if (ttl > MAX_EXPIRATION_SECONDS) {
            throw new TokenSourceException(key + ": expirationSeconds: may not specify a duration larger than 2^32 seconds");
        }
        // JWT times are whole seconds. Truncating "now" once and adding whole seconds keeps exp > iat
        // under a sub-second clock and makes IssuedToken.expiresAt equal to the token's own exp.
        Instant issuedAt = clock.instant().truncatedTo(ChronoUnit.SECONDS);
        Instant expiresAt = issuedAt.plusSeconds(ttl);

        List<String> audiences = key.audiences() == null || key.audiences().isEmpty()
                ? defaultAudiences
                : key.audiences();
        JWTClaimsSet claims = new JWTClaimsSet.Builder()
                .issuer(issuer)
                .subject(key.subject())
                .audience(audiences)
                .issueTime(Date.from(issuedAt))
                .notBeforeTime(Date.from(issuedAt))
                .expirationTime(Date.from(expiresAt))
                .jwtID(UUID.randomUUID().toString())
                .claim(KUBERNETES_CLAIM, kubernetesClaim(key))
                .build();
        SignedJWT jwt = new SignedJWT(
                new JWSHeader.Builder(JWSAlgorithm.ES256).keyID(signingKey.getKeyID()).build(), claims);
        try {
            jwt.sign(signer);
        } catch (JOSEException e) {
            throw new TokenSourceException(key + ": cannot sign the token: " + e.getMessage(), e);
        }
        return new IssuedToken(jwt.serialize(), issuedAt, expiresAt);
    }

    /** CL-7: namespace, serviceaccount {name, uid}, then the binding if any; empty fields are omitted. */
    private static Map<String, Object> kubernetesClaim(TokenKey key) throws TokenSourceException {
        Map<String, Object> claim = new LinkedHashMap<>();
        claim.put("namespace", key.namespace());
        claim.put("serviceaccount", reference(key.serviceAccount(), serviceAccountUid(key)));
        BoundObjectRef bound = key.boundObject();
        if (!bound.isNone()) {
            String member = switch (bound.kind()) {
                case "Pod" -> "pod";
                case "Secret" -> "secret";
                case "Node" -> "node";
                // The TokenRequest API refuses other kinds too.
                default -> throw new TokenSourceException(
                        key + ": cannot bind a token to a " + bound.kind() + ", only to a Pod, Secret or Node");
            };
            claim.put(member, reference(bound.name(), bound.uid()));
        }
        return claim;
    }

    private static Map<String, Object> reference(String name, String uid) {
        Map<String, Object> ref = new LinkedHashMap<>();
        if (!name.isEmpty()) {
            ref.put("name", name);
        }
        if (!uid.isEmpty()) {
            ref.put("uid", uid);
        }
        return ref;
    }

    /** Stands in for the uid a ServiceAccount registry would hold: stable for a namespace/name. */
    static String serviceAccountUid(TokenKey key) {
        String name = key.namespace() + "/" + key.serviceAccount();
        return UUID.nameUUIDFromBytes(name.getBytes(StandardCharsets.UTF_8)).toString();
    }

    /** The {@code kid} every token of this issuer carries: the RFC 7638 thumbprint of its key. */
    public String keyId() {
        return signingKey.getKeyID();
    }

    /** A JWKS document with this issuer's public key only, for verifiers. */
    public String publicJwksJson() {
        return JSONObjectUtils.toJSONString(new JWKSet(signingKey.toPublicJWK()).toJSONObject(true));
    }

    public String issuer() {
        return issuer;
    }

    @Override
    public String toString() {
        return "LocalIssuer[issuer=" + issuer + ", kid=" + keyId() + "]";
    }
}
