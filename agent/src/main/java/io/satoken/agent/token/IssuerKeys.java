package io.satoken.agent.token;

import com.nimbusds.jose.JOSEException;
import com.nimbusds.jose.JWSVerifier;
import com.nimbusds.jose.crypto.factories.DefaultJWSVerifierFactory;
import com.nimbusds.jose.jwk.AsymmetricJWK;
import com.nimbusds.jose.jwk.JWK;
import com.nimbusds.jose.jwk.JWKMatcher;
import com.nimbusds.jose.jwk.JWKSelector;
import com.nimbusds.jose.jwk.JWKSet;
import com.nimbusds.jwt.SignedJWT;
import io.kubernetes.client.openapi.ApiClient;
import io.kubernetes.client.openapi.ApiException;
import io.kubernetes.client.openapi.Pair;
import io.satoken.common.kube.Failures;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.text.ParseException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import okhttp3.Call;
import okhttp3.Response;
import okhttp3.ResponseBody;
import okio.BufferedSource;

/**
 * The public keys the API server signs ServiceAccount tokens with: its issuer's JWKS, served at
 * {@value #JWKS_PATH}. Every ServiceAccount may read it (the ClusterRole
 * {@code system:service-account-issuer-discovery}, bound by default to {@code system:serviceaccounts}).
 *
 * <p>Read once per start ({@link #fetch}); a key the API server adds later is not seen until the next
 * start, which only means a token it signed is requested again instead of adopted.
 */
public final class IssuerKeys implements SignatureCheck {

    /** Where the API server serves its issuer's JWKS (ServiceAccount issuer discovery). */
    public static final String JWKS_PATH = "/openid/v1/jwks";
    /** A JWKS larger than this is refused: a few keys take a few KiB. */
    static final int MAX_JWKS_BYTES = 1024 * 1024;

    private final JWKSet keys;

    private IssuerKeys(JWKSet keys) {
        this.keys = keys;
    }

    /**
     * Parses a JWKS document.
     *
     * @throws IllegalArgumentException when it is not one, or has no public key
     */
    public static IssuerKeys parse(String jwksJson) {
        JWKSet set;
        try {
            set = JWKSet.parse(jwksJson);
        } catch (ParseException e) {
            throw new IllegalArgumentException("not a JWKS document (" + e.getMessage() + ")");
        }
        List<JWK> publicKeys = new ArrayList<>();
        for (JWK key : set.getKeys()) {
            if (key instanceof AsymmetricJWK) {
                publicKeys.add(key.toPublicJWK());
            }
        }
        if (publicKeys.isEmpty()) {
            throw new IllegalArgumentException("the JWKS holds no RSA or EC public key");
        }
        return new IssuerKeys(new JWKSet(publicKeys));
    }

    /**
     * GETs {@value #JWKS_PATH} with the agent's credentials. Never throws: when the keys cannot be had,
     * the result says why and verifies nothing, so every token on disk is requested again.
     */
    public static SignatureCheck fetch(ApiClient client) {
        Objects.requireNonNull(client, "client");
        try {
            // through the client's own call builder, so its authentication (token, certificate) applies
            Map<String, String> headers = new HashMap<>(Map.of("Accept", "application/jwk-set+json, application/json"));
            Call call = client.buildCall(client.getBasePath(), JWKS_PATH, "GET", new ArrayList<Pair>(),
                    new ArrayList<Pair>(), null, headers, new HashMap<>(), new HashMap<>(), new String[] {"BearerToken"},
                    null);
            try (Response response = call.execute()) {
                ResponseBody body = response.body();
                if (response.code() != 200 || body == null) {
                    return SignatureCheck.unavailable("GET " + JWKS_PATH + " answered HTTP " + response.code());
                }
                BufferedSource source = body.source();
                source.request(MAX_JWKS_BYTES + 1L); // reads until that much is buffered or the body ends
                if (source.getBuffer().size() > MAX_JWKS_BYTES) {
                    return SignatureCheck.unavailable("GET " + JWKS_PATH + " answered more than "
                            + MAX_JWKS_BYTES + " bytes");
                }
                return parse(source.getBuffer().readString(StandardCharsets.UTF_8));
            }
        } catch (ApiException | IOException | RuntimeException e) {
            return SignatureCheck.unavailable("GET " + JWKS_PATH + " failed: " + Failures.inWords(e));
        }
    }

    @Override
    public String whyNot(SignedJWT jwt) {
        List<JWK> candidates = new JWKSelector(JWKMatcher.forJWSHeader(jwt.getHeader())).select(keys);
        if (candidates.isEmpty()) {
            return "no key of the API server matches its header (kid " + jwt.getHeader().getKeyID() + ", alg "
                    + jwt.getHeader().getAlgorithm() + ")";
        }
        DefaultJWSVerifierFactory verifiers = new DefaultJWSVerifierFactory();
        for (JWK key : candidates) {
            try {
                JWSVerifier verifier = verifiers.createJWSVerifier(jwt.getHeader(),
                        ((AsymmetricJWK) key).toPublicKey());
                if (jwt.verify(verifier)) {
                    return null;
                }
            } catch (JOSEException | IllegalStateException e) {
                // a key that cannot check this algorithm; try the next
            }
        }
        return "its signature does not verify against the API server's keys";
    }

    /** How many keys are known. */
    public int size() {
        return keys.size();
    }

    @Override
    public String toString() {
        return "IssuerKeys[" + keys.size() + " key(s)]";
    }
}
