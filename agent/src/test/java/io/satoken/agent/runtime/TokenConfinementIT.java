package io.satoken.agent.runtime;

import static org.assertj.core.api.Assertions.assertThat;

import io.kubernetes.client.openapi.ApiClient;
import io.kubernetes.client.openapi.ApiException;
import io.kubernetes.client.openapi.apis.AdmissionregistrationV1Api;
import io.kubernetes.client.openapi.models.V1ValidatingWebhookConfiguration;
import io.kubernetes.client.util.Yaml;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.satoken.common.testing.KubeApiServer;
import io.satoken.common.testing.RequiresKubeApiServer;
import java.io.IOException;
import java.nio.file.Path;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/**
 * The agent's confinement check against a real kube-apiserver, as the agent's ServiceAccount with
 * {@code agent/deploy/10-rbac.yaml}'s RBAC (a {@code get} of that one registration): before the control plane's
 * token webhook is registered the agent is unconfined, after it (the registration as shipped) confined.
 */
@RequiresKubeApiServer
class TokenConfinementIT {

    static final Path REGISTRATIONS = Path.of("..", "controlplane", "deploy", "webhooks", "webhook-configurations.yaml");

    @Test
    void beforeTheTokenWebhookIsRegistered_unconfined_after_confined() throws Exception {
        // a server of its own: the registration fails closed, and no other test's TokenRequest may meet it
        try (KubeApiServer server = KubeApiServer.create().start()) {
            check(server);
        }
    }

    private static void check(KubeApiServer server) throws Exception {
        ApiClient asAgent = server.clientFor(AgentRbac.token(server));
        TokenConfinement confinement = new TokenConfinement(name -> read(asAgent, name),
                "system:serviceaccount:" + AgentRbac.NAMESPACE + ":" + AgentRbac.NAME, new SimpleMeterRegistry());
        assertThat(confinement.check()).as(confinement.reason()).isEqualTo(TokenConfinement.State.UNCONFINED);

        V1ValidatingWebhookConfiguration shipped = (V1ValidatingWebhookConfiguration) Yaml.loadAll(
                REGISTRATIONS.toFile()).get(1);
        AdmissionregistrationV1Api admin = new AdmissionregistrationV1Api(server.adminClient());
        // registered with validation only (dryRun would not be readable); nothing calls it in this test
        admin.createValidatingWebhookConfiguration(shipped.webhooks(shipped.getWebhooks().stream()
                .map(w -> w.clientConfig(w.getClientConfig().service(null).url("https://127.0.0.1:1/unused")))
                .toList())).execute();
        assertThat(confinement.check()).as(confinement.reason()).isEqualTo(TokenConfinement.State.CONFINED);
    }

    private static Optional<V1ValidatingWebhookConfiguration> read(ApiClient client, String name) throws IOException {
        try {
            return Optional.of(new AdmissionregistrationV1Api(client).readValidatingWebhookConfiguration(name).execute());
        } catch (ApiException e) {
            if (e.getCode() == 404) {
                return Optional.empty();
            }
            throw new IOException("HTTP " + e.getCode() + " " + e.getResponseBody(), e);
        }
    }
}
