package io.satoken.controlplane.bench;

import com.google.gson.Gson;
import io.satoken.controlplane.jwt.LegacyClaims;
import io.satoken.controlplane.jwt.ServiceAccountSigner;
import io.satoken.controlplane.jwt.TokenGenerationException;
import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.KeyPair;
import java.security.KeyPairGenerator;
import java.security.Signature;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Warmup;

/**
 * Signing one legacy token: {@link ServiceAccountSigner} (nimbus) against the bare JCA doing the same
 * per-token work, to show what the library costs on top of the signature itself.
 *
 * <p>The baseline is meant to be the fastest honest hand-written version, so it is given every advantage
 * the signer also has or could have: the constant header segment is encoded once (the signer caches it
 * too), one {@link Signature} per thread is initialised once and reused (nimbus asks the provider for a
 * new one per token), and for ECDSA the provider itself writes R||S ({@code SHA256withECDSAinP1363Format})
 * where nimbus gets DER and transcodes it. Per token both serialise the six claims to JSON with Gson,
 * base64url the payload, sign, base64url the signature and join the three segments.
 */
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
@Warmup(iterations = 2, time = 2)
@Measurement(iterations = 5, time = 2)
@Fork(1)
@State(Scope.Thread)
public class SigningBenchmark {

    private static final Base64.Encoder B64 = Base64.getUrlEncoder().withoutPadding();
    private static final String CLAIM_PREFIX = "kubernetes.io/serviceaccount/";

    @Param({"RS256-2048", "ES256"})
    String key;

    private final LegacyClaims claims =
            new LegacyClaims("team-a", "builder", "0b4b6d1c-5b47-4a8e-9c3e-6f1d2a7b9e10", "builder-token-x7k2q");
    private final Gson gson = new Gson();
    private ServiceAccountSigner signer;
    private Signature jca;
    private String headerSegment;

    @Setup(Level.Trial)
    public void setUp() throws GeneralSecurityException {
        boolean rsa = key.startsWith("RS");
        KeyPairGenerator generator = KeyPairGenerator.getInstance(rsa ? "RSA" : "EC");
        generator.initialize(rsa ? 2048 : 256);
        KeyPair pair = generator.generateKeyPair();
        signer = ServiceAccountSigner.of(pair.getPrivate());
        jca = Signature.getInstance(rsa ? "SHA256withRSA" : "SHA256withECDSAinP1363Format");
        jca.initSign(pair.getPrivate());
        String header = "{\"alg\":\"" + signer.algorithm() + "\",\"kid\":\"" + signer.keyId() + "\"}";
        headerSegment = B64.encodeToString(header.getBytes(StandardCharsets.UTF_8));
    }

    @Benchmark
    public String signer() throws TokenGenerationException {
        return signer.generate(claims);
    }

    @Benchmark
    public String jca() throws GeneralSecurityException {
        Map<String, Object> payload = new LinkedHashMap<>();
        payload.put("iss", "kubernetes/serviceaccount");
        payload.put(CLAIM_PREFIX + "namespace", claims.namespace());
        payload.put(CLAIM_PREFIX + "secret.name", claims.secretName());
        payload.put(CLAIM_PREFIX + "service-account.name", claims.serviceAccountName());
        payload.put(CLAIM_PREFIX + "service-account.uid", claims.serviceAccountUid());
        payload.put("sub", claims.subject());
        String signingInput = headerSegment + "."
                + B64.encodeToString(gson.toJson(payload).getBytes(StandardCharsets.UTF_8));
        jca.update(signingInput.getBytes(StandardCharsets.US_ASCII));
        return signingInput + "." + B64.encodeToString(jca.sign());
    }
}
