package io.satoken.agent.runtime;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import com.nimbusds.jose.JWSHeader;
import com.nimbusds.jose.crypto.RSASSASigner;
import com.nimbusds.jose.jwk.gen.RSAKeyGenerator;
import com.nimbusds.jwt.SignedJWT;
import io.kubernetes.client.openapi.ApiException;
import io.kubernetes.client.openapi.apis.AuthenticationV1Api;
import io.kubernetes.client.openapi.apis.CoreV1Api;
import io.kubernetes.client.openapi.models.AuthenticationV1TokenRequest;
import io.kubernetes.client.openapi.models.V1Namespace;
import io.kubernetes.client.openapi.models.V1ObjectMeta;
import io.kubernetes.client.openapi.models.V1TokenRequestSpec;
import io.kubernetes.client.openapi.models.V1TokenReview;
import io.kubernetes.client.openapi.models.V1TokenReviewSpec;
import io.kubernetes.client.openapi.models.V1TokenReviewStatus;
import io.satoken.common.kube.RateLimiter;
import io.satoken.agent.config.AgentConfigParser;
import io.satoken.agent.token.IssuerKeys;
import io.satoken.agent.token.TokenInfo;
import io.satoken.agent.token.TokenRequestSource;
import io.satoken.common.testing.KubeApiServer;
import io.satoken.common.testing.Manifests;
import io.satoken.common.testing.RequiresKubeApiServer;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Static mode (systemd) against a real kube-apiserver: configured tokens, reload on edit, readiness, adoption
 * at restart checked against the API server's keys, and the example least-privilege RBAC.
 */
@RequiresKubeApiServer
class StaticModeIT {
    private static final Duration WAIT = Duration.ofSeconds(30);

    @Test
    void configuredToken_isWrittenAndAccepted_thenReissuedAfterAConfigEdit(KubeApiServer server, @TempDir Path tmp)
            throws Exception {
        String namespace = server.createNamespace("static");
        server.createServiceAccount(namespace, "exporter");
        Path dir = tmp.resolve("exporter");
        Path configFile = tmp.resolve("agent.yaml");
        String yaml = config(namespace, "vault", dir);
        Files.writeString(configFile, yaml);

        try (AgentRuntime agent = start(server, yaml, configFile)) {
            Path token = dir.resolve("token");
            await().atMost(WAIT).until(() -> Files.exists(token));
            V1TokenReviewStatus review = review(server, Files.readString(token), "vault");
            assertThat(review.getAuthenticated()).isTrue();
            assertThat(review.getUser().getUsername()).isEqualTo("system:serviceaccount:" + namespace + ":exporter");
            await().atMost(WAIT).until(() -> readyz(agent) == 200);

            Files.writeString(configFile, config(namespace, "sts", dir));
            await().atMost(WAIT).until(() -> TokenInfo.parse(Files.readString(token)).audiences().equals(List.of("sts")));
            assertThat(review(server, Files.readString(token), "sts").getAuthenticated()).isTrue();
        }
    }

    @Test
    void restart_adoptsTheGenuineTokenWithoutARequest_butReplacesAForgedOne(KubeApiServer server, @TempDir Path tmp)
            throws Exception {
        String namespace = server.createNamespace("static-restart");
        server.createServiceAccount(namespace, "exporter");
        Path dir = tmp.resolve("exporter");
        Path configFile = tmp.resolve("agent.yaml");
        String yaml = config(namespace, "vault", dir);
        Files.writeString(configFile, yaml);
        Path token = dir.resolve("token");
        try (AgentRuntime first = start(server, yaml, configFile)) {
            await().atMost(WAIT).until(() -> readyz(first) == 200);
        }
        String genuine = Files.readString(token);

        // the API server's JWKS (read with the agent's own RBAC) verifies it: adopted, no TokenRequest
        try (AgentRuntime restarted = start(server, yaml, configFile)) {
            await().atMost(WAIT).until(() -> readyz(restarted) == 200);
            // every result is served from the start, at 0
            assertThat(restarted.metrics().registry().scrape()).contains(
                    "satoken_token_requests_total{result=\"success\"} 0.0",
                    "satoken_token_requests_total{result=\"retryable\"} 0.0",
                    "satoken_token_requests_total{result=\"refused\"} 0.0");
            assertThat(Files.readString(token)).isEqualTo(genuine);
        }

        // the same claims under the API server's kid, signed by another key: not adopted, replaced
        SignedJWT real = SignedJWT.parse(genuine.strip());
        SignedJWT forged = new SignedJWT(new JWSHeader.Builder(real.getHeader()).build(), real.getJWTClaimsSet());
        forged.sign(new RSASSASigner(new RSAKeyGenerator(2048).generate()));
        Path file = token.toRealPath();
        Files.writeString(file, forged.serialize());
        try (AgentRuntime restarted = start(server, yaml, configFile)) {
            await().atMost(WAIT).until(() -> !Files.readString(token).equals(forged.serialize()));
            assertThat(restarted.metrics().registry().scrape()).contains("satoken_token_requests_total");
            assertThat(review(server, Files.readString(token), "vault").getAuthenticated()).isTrue();
        }
    }

    /**
     * The least-privilege Role of {@code systemd/rbac-example.yaml} (resourceNames: the example config's
     * ServiceAccounts only) runs the example {@code systemd/agent.yaml}, and refuses any other ServiceAccount.
     */
    @Test
    void exampleRbac_runsTheExampleConfig_andNothingElse(KubeApiServer server, @TempDir Path tmp) throws Exception {
        AgentRbac.token(server); // the satoken-system namespace
        CoreV1Api admin = new CoreV1Api(server.adminClient());
        for (String ns : List.of("monitoring", "backup")) {
            try {
                admin.createNamespace(new V1Namespace().metadata(new V1ObjectMeta().name(ns))).execute();
            } catch (ApiException e) {
                assertThat(e.getCode()).isEqualTo(409);
            }
        }
        server.createServiceAccount("monitoring", "node-exporter");
        server.createServiceAccount("monitoring", "other");
        server.createServiceAccount("backup", "restic");
        Manifests.apply(server, Path.of("../systemd/rbac-example.yaml"));
        String identity = server.serviceAccountToken("satoken-system", "satoken-static-agent");
        String yaml = Files.readString(Path.of("../systemd/agent.yaml"))
                .replace("dir: /run/satoken/", "dir: " + tmp + "/run/")
                .replace("dir: /var/lib/satoken/", "dir: " + tmp + "/lib/")
                .replace("statusSocket: /run/satoken/", "statusSocket: " + tmp + "/run/");
        Path configFile = Files.writeString(tmp.resolve("agent.yaml"), yaml);

        try (AgentRuntime agent = start(server, yaml, configFile, identity)) {
            await().atMost(WAIT).until(() -> readyz(agent) == 200);
            assertThat(review(server, Files.readString(tmp.resolve("run/node-exporter/token")),
                    "https://vault.example.com").getAuthenticated()).isTrue();
            assertThat(review(server, Files.readString(tmp.resolve("lib/restic/token")), KubeApiServer.ISSUER)
                    .getAuthenticated()).isTrue();
        }
        assertThat(IssuerKeys.fetch(server.clientFor(identity))).isInstanceOf(IssuerKeys.class);
        AuthenticationV1TokenRequest request = new AuthenticationV1TokenRequest()
                .spec(new V1TokenRequestSpec().audiences(List.of("vault")));
        assertThatThrownBy(() -> new CoreV1Api(server.clientFor(identity))
                .createNamespacedServiceAccountToken("other", "monitoring", request).execute())
                .isInstanceOfSatisfying(ApiException.class, e -> assertThat(e.getCode()).isEqualTo(403));
        assertThatThrownBy(() -> new CoreV1Api(server.clientFor(identity))
                .createNamespacedServiceAccountToken("restic", "monitoring", request).execute())
                .isInstanceOfSatisfying(ApiException.class, e -> assertThat(e.getCode()).isEqualTo(403));
    }

    private static AgentRuntime start(KubeApiServer server, String yaml, Path configFile) throws Exception {
        return start(server, yaml, configFile, AgentRbac.token(server));
    }

    private static AgentRuntime start(KubeApiServer server, String yaml, Path configFile, String agentToken)
            throws Exception {
        AgentRuntime agent = new AgentRuntime(new AgentRuntime.Settings(AgentConfigParser.parse(yaml), configFile,
                yaml.getBytes(StandardCharsets.UTF_8), null, new InetSocketAddress("127.0.0.1", 0), Optional.empty(),
                "test"),
                new TokenRequestSource(server.clientFor(agentToken), RateLimiter.defaults()), server.clientFor(agentToken));
        agent.start();
        return agent;
    }

    private static String config(String namespace, String audience, Path dir) {
        return "mode: static\nprojections:\n"
                + "  - namespace: " + namespace + "\n"
                + "    serviceAccount: exporter\n"
                + "    audiences: [" + audience + "]\n"
                + "    dir: " + dir + "\n";
    }

    private static V1TokenReviewStatus review(KubeApiServer server, String token, String audience) throws Exception {
        return new AuthenticationV1Api(server.adminClient()).createTokenReview(new V1TokenReview()
                .spec(new V1TokenReviewSpec().token(token.strip()).audiences(List.of(audience)))).execute().getStatus();
    }

    private static int readyz(AgentRuntime agent) throws Exception {
        URI uri = URI.create("http://127.0.0.1:" + agent.healthAddress().getPort() + "/readyz");
        return HttpClient.newHttpClient().send(HttpRequest.newBuilder(uri).build(),
                HttpResponse.BodyHandlers.discarding()).statusCode();
    }
}
