package io.satoken.agent.testing;

import com.google.gson.JsonObject;
import com.nimbusds.jose.JOSEException;
import com.nimbusds.jose.JWSAlgorithm;
import com.nimbusds.jose.JWSHeader;
import com.nimbusds.jose.crypto.ECDSASigner;
import com.nimbusds.jose.jwk.Curve;
import com.nimbusds.jose.jwk.ECKey;
import com.nimbusds.jose.jwk.gen.ECKeyGenerator;
import com.nimbusds.jwt.JWTClaimsSet;
import com.nimbusds.jwt.SignedJWT;
import io.satoken.agent.projection.PodIdentity;
import io.satoken.agent.token.IssuedToken;
import java.time.Instant;
import java.util.Date;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.function.Consumer;

/**
 * Tokens shaped as the kubelet's (pod-bound, one audience, {@code kubernetes.io} claim) and the JSON the kubelet
 * sends them in ({@code csi.storage.k8s.io/serviceAccount.tokens}), signed with a key of its own; a test may bend any
 * claim before signing.
 */
public final class KubeletTokenJson {

    public static final String KEY = "csi.storage.k8s.io/serviceAccount.tokens";

    private final ECKey key;

    public KubeletTokenJson() {
        try {
            key = new ECKeyGenerator(Curve.P_256).keyID("test-kubelet-key").generate();
        } catch (JOSEException e) {
            throw new IllegalStateException(e);
        }
    }

    /** A token for the pod and audience, issued at {@code iat} for {@code seconds}. */
    public IssuedToken token(PodIdentity pod, String audience, Instant iat, long seconds) {
        return token(pod, audience, iat, seconds, claims -> { });
    }

    /** As {@link #token(PodIdentity, String, Instant, long)}, with {@code bend} changing the claims first. */
    public IssuedToken token(PodIdentity pod, String audience, Instant iat, long seconds,
            Consumer<Map<String, Object>> bend) {
        Map<String, Object> kubernetes = new LinkedHashMap<>();
        kubernetes.put("namespace", pod.namespace());
        kubernetes.put("pod", new LinkedHashMap<>(Map.of("name", pod.name(), "uid", pod.uid())));
        kubernetes.put("serviceaccount", new LinkedHashMap<>(Map.of("name", pod.serviceAccount(),
                "uid", "5a0c1b2d-0000-0000-0000-000000000001")));
        Map<String, Object> claims = new LinkedHashMap<>();
        claims.put("iss", "https://kubernetes.default.svc.cluster.local");
        claims.put("sub", "system:serviceaccount:" + pod.namespace() + ":" + pod.serviceAccount());
        claims.put("aud", audience.isEmpty() ? List.of("https://kubernetes.default.svc") : List.of(audience));
        claims.put("iat", iat.getEpochSecond());
        claims.put("nbf", iat.getEpochSecond());
        claims.put("exp", iat.getEpochSecond() + seconds);
        claims.put("jti", UUID.randomUUID().toString());
        claims.put("kubernetes.io", kubernetes);
        bend.accept(claims);
        try {
            JWTClaimsSet.Builder builder = new JWTClaimsSet.Builder();
            claims.forEach((name, value) -> builder.claim(name, switch (name) {
                case "iat", "nbf", "exp" -> Date.from(Instant.ofEpochSecond((Long) value));
                default -> value;
            }));
            SignedJWT jwt = new SignedJWT(new JWSHeader.Builder(JWSAlgorithm.ES256).keyID(key.getKeyID()).build(),
                    builder.build());
            jwt.sign(new ECDSASigner(key));
            return new IssuedToken(jwt.serialize(), iat, iat.plusSeconds(seconds));
        } catch (JOSEException e) {
            throw new IllegalStateException(e);
        }
    }

    /** The JWKS of the key, for a {@code SignatureCheck} that accepts these tokens. */
    public String publicJwksJson() {
        return new com.nimbusds.jose.jwk.JWKSet(key.toPublicJWK()).toString();
    }

    /** The kubelet's JSON for the tokens, by audience. */
    public static String json(Map<String, IssuedToken> byAudience) {
        JsonObject all = new JsonObject();
        byAudience.forEach((audience, token) -> {
            JsonObject status = new JsonObject();
            status.addProperty("token", token.token());
            status.addProperty("expirationTimestamp", token.expiresAt().toString());
            all.add(audience, status);
        });
        return all.toString();
    }
}
