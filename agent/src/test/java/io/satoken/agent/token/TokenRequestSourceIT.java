package io.satoken.agent.token;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.nimbusds.jwt.SignedJWT;
import io.kubernetes.client.openapi.ApiException;
import io.kubernetes.client.openapi.apis.AuthenticationV1Api;
import io.kubernetes.client.openapi.apis.CoreV1Api;
import io.kubernetes.client.openapi.models.V1Container;
import io.kubernetes.client.openapi.models.V1ObjectMeta;
import io.kubernetes.client.openapi.models.V1Pod;
import io.kubernetes.client.openapi.models.V1PodSpec;
import io.kubernetes.client.openapi.models.V1TokenReview;
import io.kubernetes.client.openapi.models.V1TokenReviewSpec;
import io.kubernetes.client.openapi.models.V1TokenReviewStatus;
import io.satoken.common.kube.KubeClients;
import io.satoken.common.kube.RateLimiter;
import io.satoken.common.testing.KubeApiServer;
import io.satoken.common.testing.RequiresKubeApiServer;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.UUID;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@link TokenRequestSource} against a real kube-apiserver: what it issues, and how refusals are mapped. */
@RequiresKubeApiServer
class TokenRequestSourceIT {

    private static final String SA = "app-sa";
    private static final String POD = "web-0";

    @TempDir
    static Path dir;

    private static KubeApiServer server;
    private static String ns;
    private static String podUid;
    private static TokenRequestSource source;

    @BeforeAll
    static void setUp(KubeApiServer shared) throws Exception {
        server = shared;
        ns = server.createNamespace("tokenrequest");
        server.createServiceAccount(ns, SA);
        // No scheduler or kubelet runs: the Pod stays Pending on a node that does not exist, which is
        // all a pod-bound token needs. client-java 25 sends "overhead": {} unless told not to, which
        // the API server's RuntimeClass admission rejects (403) without a RuntimeClass.
        V1Pod pod = new V1Pod()
                .metadata(new V1ObjectMeta().name(POD))
                .spec(new V1PodSpec().serviceAccountName(SA).nodeName("node-1").overhead(null)
                        .containers(List.of(new V1Container().name("app").image("registry.invalid/app:1"))));
        podUid = new CoreV1Api(server.adminClient()).createNamespacedPod(ns, pod).execute().getMetadata().getUid();

        Path kubeconfig = dir.resolve("kubeconfig");
        server.writeKubeconfig(kubeconfig, server.adminToken());
        source = new TokenRequestSource(KubeClients.fromFlags(kubeconfig), RateLimiter.defaults());
    }

    @Test
    void podBoundToken_isAcceptedForItsAudienceAsTheServiceAccountOfThePod() throws Exception {
        TokenKey key = new TokenKey(ns, SA, List.of("vault"), 3600, BoundObjectRef.pod(POD, podUid));

        IssuedToken issued = source.issue(key);

        assertThat(issued.ttl()).isEqualTo(Duration.ofHours(1));
        V1TokenReviewStatus review = review(issued.token(), List.of("vault"));
        assertThat(review.getAuthenticated()).isTrue();
        assertThat(review.getAudiences()).containsExactly("vault");
        assertThat(review.getUser().getUsername()).isEqualTo("system:serviceaccount:" + ns + ":" + SA);
        assertThat(review.getUser().getExtra())
                .containsEntry("authentication.kubernetes.io/pod-name", List.of(POD))
                .containsEntry("authentication.kubernetes.io/pod-uid", List.of(podUid));
        // audience-scoped: the API server's own audience does not accept it
        assertThat(review(issued.token(), null).getAuthenticated()).isNotEqualTo(Boolean.TRUE);
    }

    @Test
    void nullAudiencesAndZeroExpiration_getTheServersDefaults() throws Exception {
        TokenKey key = new TokenKey(ns, SA, null, 0, BoundObjectRef.NONE);

        IssuedToken issued = source.issue(key);

        assertThat(SignedJWT.parse(issued.token()).getJWTClaimsSet().getAudience())
                .containsExactly(KubeApiServer.ISSUER); // --api-audiences
        assertThat(issued.ttl()).isEqualTo(Duration.ofHours(1)); // PV-2
        V1TokenReviewStatus review = review(issued.token(), null);
        assertThat(review.getAuthenticated()).isTrue();
        assertThat(review.getUser().getExtra()).doesNotContainKey("authentication.kubernetes.io/pod-name");
    }

    @Test
    void unknownServiceAccount_isPermanent404() {
        TokenKey key = new TokenKey(ns, "ghost", List.of("vault"), 3600, BoundObjectRef.NONE);

        assertThatThrownBy(() -> source.issue(key))
                .isInstanceOfSatisfying(TokenSourceException.class, e -> {
                    assertThat(e.permanent()).isTrue();
                    assertThat(e).hasMessage("TokenRequest for " + ns + "/ghost failed: 404 Not Found: "
                            + "serviceaccounts \"ghost\" not found");
                });
    }

    @Test
    void wrongPodUid_isPermanent409() {
        // the Pod was deleted and recreated under the same name: the old uid never works again
        TokenKey key = new TokenKey(ns, SA, List.of("vault"), 3600,
                BoundObjectRef.pod(POD, UUID.randomUUID().toString()));

        assertThatThrownBy(() -> source.issue(key))
                .isInstanceOfSatisfying(TokenSourceException.class, e -> {
                    assertThat(e.permanent()).isTrue();
                    assertThat(e).hasMessageStartingWith("TokenRequest for " + ns + "/" + SA + " failed: 409 Conflict: ")
                            .hasMessageContaining("does not match the UID in record");
                });
    }

    @Test
    void missingPod_isPermanent404() {
        TokenKey key = new TokenKey(ns, SA, List.of("vault"), 3600, BoundObjectRef.pod("gone", podUid));

        assertThatThrownBy(() -> source.issue(key))
                .isInstanceOfSatisfying(TokenSourceException.class, e -> {
                    assertThat(e.permanent()).isTrue();
                    assertThat(e).hasMessage("TokenRequest for " + ns + "/" + SA + " failed: 404 Not Found: "
                            + "pods \"gone\" not found");
                });
    }

    @Test
    void podOfAnotherServiceAccount_isPermanent400() throws ApiException {
        server.createServiceAccount(ns, "other-sa");
        TokenKey key = new TokenKey(ns, "other-sa", List.of("vault"), 3600, BoundObjectRef.pod(POD, podUid));

        assertThatThrownBy(() -> source.issue(key))
                .isInstanceOfSatisfying(TokenSourceException.class, e -> {
                    assertThat(e.permanent()).isTrue();
                    assertThat(e).hasMessageStartingWith("TokenRequest for " + ns + "/other-sa failed: 400 Bad Request: ")
                            .hasMessageContaining("different serviceaccount name");
                });
    }

    @Test
    void tooShortExpiration_isPermanent422() {
        TokenKey key = new TokenKey(ns, SA, List.of("vault"), 60, BoundObjectRef.NONE);

        assertThatThrownBy(() -> source.issue(key))
                .isInstanceOfSatisfying(TokenSourceException.class, e -> {
                    assertThat(e.permanent()).isTrue();
                    assertThat(e).hasMessageStartingWith("TokenRequest for " + ns + "/" + SA
                                    + " failed: 422 Unprocessable Entity: ")
                            .hasMessageContaining("may not specify a duration less than 10 minutes");
                });
    }

    @Test
    void callerWithoutRbac_isPermanent403() throws ApiException {
        String token = server.serviceAccountToken(ns, "no-rbac");
        TokenRequestSource unprivileged = new TokenRequestSource(server.clientFor(token), RateLimiter.defaults());
        TokenKey key = new TokenKey(ns, SA, List.of("vault"), 3600, BoundObjectRef.NONE);

        assertThatThrownBy(() -> unprivileged.issue(key))
                .isInstanceOfSatisfying(TokenSourceException.class, e -> {
                    assertThat(e.permanent()).isTrue();
                    assertThat(e).hasMessageStartingWith("TokenRequest for " + ns + "/" + SA + " failed: 403 Forbidden: ")
                            .hasMessageContaining("cannot create resource \"serviceaccounts/token\"")
                            .hasMessageNotContaining(token);
                });
    }

    private static V1TokenReviewStatus review(String token, List<String> audiences) throws ApiException {
        V1TokenReview review = new V1TokenReview().spec(new V1TokenReviewSpec().token(token).audiences(audiences));
        return new AuthenticationV1Api(server.adminClient()).createTokenReview(review).execute().getStatus();
    }
}
