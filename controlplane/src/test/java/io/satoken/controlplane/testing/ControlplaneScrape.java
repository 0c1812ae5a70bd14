package io.satoken.controlplane.testing;

import io.satoken.controlplane.runtime.AdmissionWebhook;
import io.kubernetes.client.openapi.ApiClient;
import io.satoken.controlplane.admission.ServiceAccountAdmission;
import io.satoken.controlplane.https.ServingCertificate;
import io.satoken.controlplane.webhook.TestCertificates;
import io.satoken.controlplane.https.WebhookServer;
import io.satoken.controlplane.aggregation.AggregationController;
import io.satoken.controlplane.rootca.RootCaPublisher;
import io.satoken.controlplane.runtime.ControlplaneRuntime;
import io.satoken.controlplane.serviceaccounts.ServiceAccountsController;
import io.satoken.controlplane.tokens.TokensController;
import java.net.InetSocketAddress;
import java.nio.file.Path;
import java.util.List;
import java.util.Set;

/**
 * The control plane's {@code /metrics} text as a process with every controller and both webhooks serves it
 * before it has run anything: built, never started, against an API server that is never called.
 */
public final class ControlplaneScrape {

    private ControlplaneScrape() {
    }

    /** @param dir where the webhook's test certificate goes */
    public static String render(Path dir) throws Exception {
        TestCertificates.Pair pair = TestCertificates.write(dir, "satoken-webhook.satoken-webhook.svc");
        ApiClient unused = new ApiClient().setBasePath("https://127.0.0.1:1");
        ApiClient unusedWatch = new ApiClient().setBasePath("https://127.0.0.1:1");
        unusedWatch.setReadTimeout(0);
        ControlplaneRuntime.Settings settings = new ControlplaneRuntime.Settings(
                Set.of(TokensController.NAME, ServiceAccountsController.NAME, RootCaPublisher.NAME,
                        AggregationController.NAME),
                null, new byte[0], false, 1, new InetSocketAddress("127.0.0.1", 0), null,
                new AdmissionWebhook.Settings(new InetSocketAddress("127.0.0.1", 0),
                        ServingCertificate.load(pair.cert(), pair.key()), false,
                        "satoken-agent/satoken-agent", WebhookServer.Limits.defaults(),
                        AdmissionWebhook.WEBHOOKS.keySet(), List.of("https://kubernetes.default.svc")));
        try (ControlplaneRuntime runtime = new ControlplaneRuntime(settings, unused, unusedWatch, unused)) {
            return runtime.registry().scrape();
        }
    }
}
