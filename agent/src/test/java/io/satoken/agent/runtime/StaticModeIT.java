package io.satoken.agent.runtime;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.kubernetes.client.openapi.apis.AuthenticationV1Api;
import io.kubernetes.client.openapi.models.V1TokenReview;
import io.kubernetes.client.openapi.models.V1TokenReviewSpec;
import io.kubernetes.client.openapi.models.V1TokenReviewStatus;
import io.satoken.agent.kube.RateLimiter;
import io.satoken.agent.projection.AgentConfigParser;
import io.satoken.agent.token.TokenInfo;
import io.satoken.agent.token.TokenRequestSource;
import io.satoken.common.testing.KubeApiServer;
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

/** Static mode (systemd) against a real kube-apiserver: configured tokens, reload on edit, readiness. */
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

        try (AgentRuntime agent = new AgentRuntime(new AgentRuntime.Settings(AgentConfigParser.parse(yaml), configFile,
                yaml.getBytes(StandardCharsets.UTF_8), null, new InetSocketAddress("127.0.0.1", 0), Optional.empty(),
                "test"),
                new TokenRequestSource(server.clientFor(AgentRbac.token(server)), RateLimiter.defaults()), null)) {
            agent.start();
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
