package io.satoken.controlplane.runtime;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.kubernetes.client.openapi.ApiClient;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.satoken.controlplane.https.ServingCertificate;
import io.satoken.controlplane.https.WebhookServer;
import io.satoken.controlplane.kube.Informers;
import io.satoken.controlplane.webhook.TestCertificates;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The webhook assembled: the paths served, and no token check without the account it confines (no fail-open). */
class AdmissionWebhookTest {

    @TempDir
    Path dir;
    TestCertificates.Pair pair;

    AdmissionWebhook.Settings settings(Set<String> webhooks, String agent) throws Exception {
        pair = TestCertificates.write(dir.resolve("tls"), "webhook");
        return new AdmissionWebhook.Settings(new InetSocketAddress("127.0.0.1", 0),
                ServingCertificate.load(pair.cert(), pair.key()), false, agent,
                WebhookServer.Limits.defaults(), webhooks, List.of("https://kubernetes.default.svc"));
    }

    @Test
    void tokenCheck_withoutTheAgentAccount_refusedBeforeItServes() {
        for (Set<String> webhooks : List.of(Set.of("serviceaccount-token"), Set.of("pods", "serviceaccount-token"))) {
            assertThatThrownBy(() -> settings(webhooks, null))
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessageStartingWith("the serviceaccount-token webhook needs the node agents' ServiceAccount");
        }
    }

    @Test
    void oldSettings_serveEveryPath_soNeedTheAgentAccountToo() {
        assertThatThrownBy(() -> new AdmissionWebhook.Settings(new InetSocketAddress("127.0.0.1", 0), null,
                false, null, WebhookServer.Limits.defaults()))
                .hasMessageContaining("--agent-service-account");
    }

    @Test
    void path_notSelected_answers404() throws Exception {
        AdmissionWebhook.Settings settings = settings(Set.of("pods"), null);
        ApiClient watchClient = new ApiClient().setReadTimeout(0); // never used: nothing is watched or read here
        try (AdmissionWebhook webhook = new AdmissionWebhook(settings, new Informers(watchClient), new ApiClient(),
                new SimpleMeterRegistry())) {
            webhook.start();
            HttpResponse<String> response = client().send(HttpRequest.newBuilder(
                    URI.create("https://127.0.0.1:" + webhook.address().getPort()
                            + AdmissionWebhook.VALIDATE_TOKEN_REQUESTS))
                    .POST(HttpRequest.BodyPublishers.ofString("{}")).header("Content-Type", "application/json").build(),
                    HttpResponse.BodyHandlers.ofString());

            assertThat(response.statusCode()).isEqualTo(404);
            assertThat(response.body()).contains("no webhook at " + AdmissionWebhook.VALIDATE_TOKEN_REQUESTS);
        }
    }

    private HttpClient client() throws Exception {
        return HttpClient.newBuilder().sslContext(pair.trustingIt()).version(HttpClient.Version.HTTP_1_1).build();
    }
}
