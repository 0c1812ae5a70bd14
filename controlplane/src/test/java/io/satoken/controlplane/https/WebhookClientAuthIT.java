package io.satoken.controlplane.https;

import static org.assertj.core.api.Assertions.assertThat;

import io.kubernetes.client.openapi.ApiClient;
import io.kubernetes.client.openapi.ApiException;
import io.kubernetes.client.openapi.apis.AdmissionregistrationV1Api;
import io.kubernetes.client.openapi.apis.CoreV1Api;
import io.kubernetes.client.openapi.models.AdmissionregistrationV1WebhookClientConfig;
import io.kubernetes.client.openapi.models.V1ConfigMap;
import io.kubernetes.client.openapi.models.V1LabelSelector;
import io.kubernetes.client.openapi.models.V1ObjectMeta;
import io.kubernetes.client.openapi.models.V1RuleWithOperations;
import io.kubernetes.client.openapi.models.V1ValidatingWebhook;
import io.kubernetes.client.openapi.models.V1ValidatingWebhookConfiguration;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.satoken.common.testing.KubeApiServer;
import io.satoken.common.testing.RequiresKubeApiServer;
import io.satoken.controlplane.testing.ApiServerClientCertificate;
import io.satoken.controlplane.webhook.AdmissionEndpoint;
import io.satoken.controlplane.admission.Admission;
import io.satoken.controlplane.admission.Verdict;
import io.satoken.controlplane.webhook.TestCertificates;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * {@code --client-ca-file} against a real kube-apiserver (the first security review): the API server, given an
 * AdmissionConfiguration whose kubeconfig names the webhook's host:port with a client certificate, is
 * served; for a webhook its kubeconfig does not name it sends no certificate, and that webhook's handshake
 * refuses it. Both webhooks require a certificate from the same CA; only the kubeconfig differs.
 */
@RequiresKubeApiServer
class WebhookClientAuthIT {

    static final String MESSAGE = "reviewed by the webhook that requires client certificates";

    static Path dir;
    static WebhookServer named;
    static WebhookServer unnamed;
    static SimpleMeterRegistry unnamedRegistry = new SimpleMeterRegistry();
    static KubeApiServer server;
    static CoreV1Api admin;
    static String namespace;

    @BeforeAll
    static void start() throws Exception {
        dir = Files.createTempDirectory("satoken-client-auth");
        TestCertificates.Pair serving = TestCertificates.write(dir.resolve("serving"), "satoken-webhook");
        TestCertificates.Authority ca = TestCertificates.authority(dir.resolve("client-ca"), "webhook-clients");
        TestCertificates.Pair apiserver = TestCertificates.client(dir.resolve("apiserver"),
                "kube-apiserver-webhook-client", ca);
        Admission deny = request -> Verdict.forbidden(MESSAGE);
        named = webhook(ServingCertificate.load(serving.cert(), serving.key(), ca.cert()), deny,
                new SimpleMeterRegistry());
        unnamed = webhook(ServingCertificate.load(serving.cert(), serving.key(), ca.cert()), deny, unnamedRegistry);

        // the user's name is the host:port the webhook configuration's url names
        Path admission = ApiServerClientCertificate.admissionConfiguration(dir,
                "127.0.0.1:" + named.address().getPort(), apiserver);
        server = KubeApiServer.builder().flag("--admission-control-config-file", admission.toString()).build().start();
        ApiClient client = server.adminClient();
        admin = new CoreV1Api(client);
        namespace = server.createNamespace("client-auth");
        byte[] caBundle = serving.pem().getBytes(StandardCharsets.US_ASCII);
        new AdmissionregistrationV1Api(client).createValidatingWebhookConfiguration(
                new V1ValidatingWebhookConfiguration().metadata(new V1ObjectMeta().name("satoken-client-auth-it"))
                .webhooks(List.of(configMapWebhook("named.satoken.io", named, "named", caBundle),
                        configMapWebhook("unnamed.satoken.io", unnamed, "unnamed", caBundle)))).execute();
        // the API server picks webhook configurations up asynchronously
        Awaitility.await().atMost(Duration.ofSeconds(60)).pollInterval(Duration.ofMillis(200))
                .until(() -> failure("named").contains(MESSAGE));
    }

    @AfterAll
    static void stop() {
        if (server != null) {
            server.close();
        }
        if (named != null) {
            named.close();
        }
        if (unnamed != null) {
            unnamed.close();
        }
        if (dir != null) {
            try (var files = Files.walk(dir)) {
                files.sorted(java.util.Comparator.reverseOrder()).forEach(file -> file.toFile().delete());
            } catch (java.io.IOException e) {
                // a temp directory left behind is not worth failing the run for
            }
        }
    }

    @Test
    void apiServer_withClientCertificateOfItsAdmissionKubeconfig_isServed() throws Exception {
        String failure = failure("named");

        assertThat(failure).contains(MESSAGE);
    }

    @Test
    void apiServer_withoutAClientCertificateForThatWebhook_refusedInTheHandshake() throws Exception {
        String failure = failure("unnamed");

        // a JSON Status: "failed calling webhook \"unnamed.satoken.io\": ... remote error: tls: bad certificate"
        assertThat(failure).contains("failed calling webhook", "unnamed.satoken.io", "remote error: tls: ")
                .doesNotContain(MESSAGE);
        // every series is there from the start, at 0: none counted a request
        assertThat(unnamedRegistry.find("satoken_webhook_requests_total").counters())
                .allSatisfy(c -> assertThat(c.count()).isZero());
    }

    private static WebhookServer webhook(ServingCertificate certificate, Admission admission,
            SimpleMeterRegistry registry) throws InterruptedException {
        WebhookServer webhook = new WebhookServer(new InetSocketAddress("127.0.0.1", 0), certificate,
                new AdmissionEndpoint(Map.of("/validate", admission)), WebhookServer.Limits.defaults(),
                new WebhookMetrics(registry, certificate));
        webhook.start();
        return webhook;
    }

    /** A webhook on ConfigMaps labelled {@code satoken-it=<label>}, failing closed. */
    private static V1ValidatingWebhook configMapWebhook(String name, WebhookServer webhook, String label,
            byte[] caBundle) {
        return new V1ValidatingWebhook().name(name)
                .clientConfig(new AdmissionregistrationV1WebhookClientConfig()
                        .url("https://127.0.0.1:" + webhook.address().getPort() + "/validate").caBundle(caBundle))
                .rules(List.of(new V1RuleWithOperations().apiGroups(List.of("")).apiVersions(List.of("v1"))
                        .resources(List.of("configmaps")).operations(List.of("CREATE"))))
                .objectSelector(new V1LabelSelector().matchLabels(Map.of("satoken-it", label)))
                .failurePolicy("Fail").sideEffects("None").timeoutSeconds(5).admissionReviewVersions(List.of("v1"));
    }

    /** Creates (dry run) a ConfigMap labelled {@code label}: the API server's answer when refused, else "created". */
    private static String failure(String label) throws Exception {
        V1ConfigMap map = new V1ConfigMap().metadata(new V1ObjectMeta().name("m-" + System.nanoTime())
                .labels(Map.of("satoken-it", label)));
        try {
            admin.createNamespacedConfigMap(namespace, map).dryRun("All").execute();
            return "created";
        } catch (ApiException refused) {
            return refused.getResponseBody();
        }
    }
}
