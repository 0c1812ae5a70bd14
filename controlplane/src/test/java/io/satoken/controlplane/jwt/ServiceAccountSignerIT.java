package io.satoken.controlplane.jwt;

import static org.assertj.core.api.Assertions.assertThat;

import io.kubernetes.client.openapi.apis.AuthenticationV1Api;
import io.kubernetes.client.openapi.apis.CoreV1Api;
import io.kubernetes.client.openapi.models.V1ObjectMeta;
import io.kubernetes.client.openapi.models.V1Secret;
import io.kubernetes.client.openapi.models.V1TokenReview;
import io.kubernetes.client.openapi.models.V1TokenReviewSpec;
import io.kubernetes.client.openapi.models.V1TokenReviewStatus;
import io.satoken.common.testing.KubeApiServer;
import io.satoken.common.testing.RequiresKubeApiServer;
import io.satoken.controlplane.testing.TestKeys;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * A real kube-apiserver v1.26, given our public keys in {@code --service-account-key-file}, authenticates
 * the legacy tokens we sign exactly as it does kube-controller-manager's: same algorithm, kid, claims
 * (CL-1..CL-3), and the Secret lookup of CL-4. There is no controller-manager in the harness, so each test
 * writes the token into its Secret itself, as the tokens controller will (TC-5).
 */
@RequiresKubeApiServer
class ServiceAccountSignerIT {

    private static final String SA = "builder";

    @TempDir
    static Path keys;

    private static KubeApiServer server;
    private static Map<String, ServiceAccountSigner> signers;

    @BeforeAll
    static void startServerTrustingOurKeys() throws Exception {
        signers = Map.of(
                "rsa-pkcs1.pem", ServiceAccountSigner.load(TestKeys.path("rsa-pkcs1.pem")),
                "ec-p256-sec1.pem", ServiceAccountSigner.load(TestKeys.path("ec-p256-sec1.pem")));
        KubeApiServer.Builder builder = KubeApiServer.builder();
        for (var entry : signers.entrySet()) {
            Path pub = Files.writeString(keys.resolve(entry.getKey() + ".pub"),
                    TestKeys.publicKeyPem(entry.getValue().publicKey()), StandardCharsets.US_ASCII);
            builder.addFlag("--service-account-key-file", pub.toString());
        }
        server = builder.build().start();
    }

    @AfterAll
    static void stopServer() {
        if (server != null) {
            server.close();
        }
    }

    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {"rsa-pkcs1.pem", "ec-p256-sec1.pem"})
    void legacyTokenInItsSecret_isAuthenticatedAsTheServiceAccount(String keyFile) throws Exception {
        String namespace = server.createNamespace("jwt");
        LegacyClaims claims = claimsFor(namespace, SA + "-token");
        String token = signers.get(keyFile).generate(claims);
        storeTokenSecret(claims, token);

        V1TokenReviewStatus review = review(token);

        assertThat(review.getAuthenticated()).as("authenticated; server said: %s", review.getError()).isTrue();
        assertThat(review.getUser().getUsername()).isEqualTo("system:serviceaccount:" + namespace + ":" + SA);
        assertThat(review.getUser().getUid()).isEqualTo(claims.serviceAccountUid());
    }

    @Test
    void tokenSignedWithAKeyTheServerDoesNotKnow_isNotAuthenticated() throws Exception {
        String namespace = server.createNamespace("jwt");
        LegacyClaims claims = claimsFor(namespace, SA + "-token");
        // a good token in every other respect: right claims, stored in its Secret
        String token = ServiceAccountSigner.load(TestKeys.path("ec-p384-sec1.pem")).generate(claims);
        storeTokenSecret(claims, token);

        V1TokenReviewStatus review = review(token);

        assertThat(review.getAuthenticated()).isNotEqualTo(Boolean.TRUE);
        // refused for its signature (v1.26 tries every key; it does not select by kid), not by the lookup
        assertThat(review.getError()).doesNotContain("server's copy");
    }

    @Test
    void tokenThatIsNotTheSecretsCopy_isNotAuthenticated() throws Exception {
        String namespace = server.createNamespace("jwt");
        LegacyClaims claims = claimsFor(namespace, SA + "-token");
        String token = signers.get("ec-p256-sec1.pem").generate(claims);
        // CL-4: the Secret must hold exactly the presented token; here it holds another valid one
        storeTokenSecret(claims, signers.get("rsa-pkcs1.pem").generate(claims));

        V1TokenReviewStatus review = review(token);

        assertThat(review.getAuthenticated()).isNotEqualTo(Boolean.TRUE);
        assertThat(review.getError()).contains("does not match server's copy");
    }

    /** Creates the ServiceAccount; its UID, given by the server, goes into the claims. */
    private static LegacyClaims claimsFor(String namespace, String secretName) throws Exception {
        server.createServiceAccount(namespace, SA);
        String uid = new CoreV1Api(server.adminClient()).readNamespacedServiceAccount(SA, namespace).execute()
                .getMetadata().getUid();
        return new LegacyClaims(namespace, SA, uid, secretName);
    }

    private static void storeTokenSecret(LegacyClaims claims, String token) throws Exception {
        V1Secret secret = new V1Secret()
                .metadata(new V1ObjectMeta().name(claims.secretName()).annotations(Map.of(
                        "kubernetes.io/service-account.name", claims.serviceAccountName(),
                        "kubernetes.io/service-account.uid", claims.serviceAccountUid())))
                .type("kubernetes.io/service-account-token")
                .data(Map.of("token", token.getBytes(StandardCharsets.US_ASCII)));
        new CoreV1Api(server.adminClient()).createNamespacedSecret(claims.namespace(), secret).execute();
    }

    private static V1TokenReviewStatus review(String token) throws Exception {
        return new AuthenticationV1Api(server.adminClient())
                .createTokenReview(new V1TokenReview().spec(new V1TokenReviewSpec().token(token)))
                .execute().getStatus();
    }
}
