package io.satoken.controlplane.webhook;

import io.satoken.controlplane.runtime.AdmissionWebhook;
import io.kubernetes.client.openapi.ApiClient;
import io.kubernetes.client.openapi.ApiException;
import io.kubernetes.client.openapi.apis.AdmissionregistrationV1Api;
import io.kubernetes.client.openapi.apis.RbacAuthorizationV1Api;
import io.kubernetes.client.openapi.models.AdmissionregistrationV1WebhookClientConfig;
import io.kubernetes.client.openapi.models.RbacV1Subject;
import io.kubernetes.client.openapi.models.V1ClusterRole;
import io.kubernetes.client.openapi.models.V1ClusterRoleBinding;
import io.kubernetes.client.openapi.models.V1MutatingWebhook;
import io.kubernetes.client.openapi.models.V1MutatingWebhookConfiguration;
import io.kubernetes.client.openapi.models.V1ObjectMeta;
import io.kubernetes.client.openapi.models.V1PolicyRule;
import io.kubernetes.client.openapi.models.V1RoleRef;
import io.kubernetes.client.openapi.models.V1RuleWithOperations;
import io.kubernetes.client.openapi.models.V1ValidatingWebhook;
import io.kubernetes.client.openapi.models.V1ValidatingWebhookConfiguration;
import io.satoken.common.testing.KubeApiServer;
import io.satoken.controlplane.https.ServingCertificate;
import io.satoken.controlplane.https.WebhookServer;
import io.satoken.controlplane.runtime.ControlplaneIT;
import io.satoken.controlplane.runtime.ControlplaneRuntime;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Set;

/**
 * The control plane's webhook, in this JVM, serving a real kube-apiserver: started with the given controllers
 * and webhook paths, a fresh serving certificate, and {@code satoken-agent/satoken-agent} as the agent's
 * account. The registrations are the deployed ones' essentials: fail closed, v1 reviews only.
 */
final class WebhookFixture implements AutoCloseable {

    static final String AGENT_NAMESPACE = "satoken-agent";
    static final String AGENT = "satoken-agent";

    private final KubeApiServer server;
    private final ControlplaneRuntime runtime;
    private final byte[] caBundle;

    private WebhookFixture(KubeApiServer server, ControlplaneRuntime runtime, byte[] caBundle) {
        this.server = server;
        this.runtime = runtime;
        this.caBundle = caBundle;
    }

    static WebhookFixture start(KubeApiServer server, Set<String> controllers, Set<String> webhooks)
            throws Exception {
        Path dir = Files.createTempDirectory(server.workDir(), "webhook");
        TestCertificates.Pair pair = TestCertificates.write(dir, "satoken-webhook");
        ApiClient client = server.clientFor(server.adminToken());
        ApiClient watchClient = server.clientFor(server.adminToken());
        watchClient.setReadTimeout(0);
        ControlplaneRuntime runtime = ControlplaneIT.runInBackground(new ControlplaneRuntime(
                new ControlplaneRuntime.Settings(controllers, null, new byte[0], false, 2,
                        new InetSocketAddress("127.0.0.1", 0), null,
                        new AdmissionWebhook.Settings(new InetSocketAddress("127.0.0.1", 0),
                                ServingCertificate.load(pair.cert(), pair.key()), false, AGENT_NAMESPACE + "/" + AGENT,
                                WebhookServer.Limits.defaults(), webhooks, List.of(KubeApiServer.ISSUER))),
                client, watchClient, client));
        runtime.startServing();
        return new WebhookFixture(server, runtime, pair.pem().getBytes(StandardCharsets.US_ASCII));
    }

    ControlplaneRuntime runtime() {
        return runtime;
    }

    /** Registers the pod webhook (ServiceAccount admission and token injection) as {@code satoken-it}. */
    void registerPodWebhook() throws ApiException {
        new AdmissionregistrationV1Api(server.adminClient()).createMutatingWebhookConfiguration(
                new V1MutatingWebhookConfiguration().metadata(new V1ObjectMeta().name("satoken-it"))
                        .webhooks(List.of(new V1MutatingWebhook().name("pods.serviceaccount.satoken.io")
                                .clientConfig(clientConfig(AdmissionWebhook.MUTATE_PODS))
                                .rules(List.of(rule("pods")))
                                .failurePolicy("Fail").sideEffects("None").reinvocationPolicy("IfNeeded")
                                .timeoutSeconds(10).admissionReviewVersions(List.of("v1"))))).execute();
    }

    /** Registers the token webhook (NT-1..NT-6) as {@code satoken-it}. */
    void registerTokenWebhook() throws ApiException {
        new AdmissionregistrationV1Api(server.adminClient()).createValidatingWebhookConfiguration(
                new V1ValidatingWebhookConfiguration().metadata(new V1ObjectMeta().name("satoken-it"))
                        .webhooks(List.of(new V1ValidatingWebhook().name("serviceaccount-token.satoken.io")
                                .clientConfig(clientConfig(AdmissionWebhook.VALIDATE_TOKEN_REQUESTS))
                                .rules(List.of(rule("serviceaccounts/token")))
                                .failurePolicy("Fail").sideEffects("None").timeoutSeconds(5)
                                .admissionReviewVersions(List.of("v1"))))).execute();
    }

    /** Lets the agent's account create TokenRequests for any ServiceAccount, as its ClusterRole does. */
    void allowAgentTokenRequests() throws ApiException {
        RbacAuthorizationV1Api rbac = new RbacAuthorizationV1Api(server.adminClient());
        rbac.createClusterRole(new V1ClusterRole().metadata(new V1ObjectMeta().name("it-agent-tokens"))
                .rules(List.of(new V1PolicyRule().apiGroups(List.of("")).resources(List.of("serviceaccounts/token"))
                        .verbs(List.of("create"))))).execute();
        rbac.createClusterRoleBinding(new V1ClusterRoleBinding().metadata(new V1ObjectMeta().name("it-agent-tokens"))
                .roleRef(new V1RoleRef().apiGroup("rbac.authorization.k8s.io").kind("ClusterRole").name("it-agent-tokens"))
                .subjects(List.of(new RbacV1Subject().kind("ServiceAccount").namespace(AGENT_NAMESPACE).name(AGENT))))
                .execute();
    }

    private AdmissionregistrationV1WebhookClientConfig clientConfig(String path) {
        return new AdmissionregistrationV1WebhookClientConfig()
                .url("https://127.0.0.1:" + runtime.webhookAddress().getPort() + path).caBundle(caBundle);
    }

    private static V1RuleWithOperations rule(String resource) {
        return new V1RuleWithOperations().apiGroups(List.of("")).apiVersions(List.of("v1"))
                .resources(List.of(resource)).operations(List.of("CREATE"));
    }

    @Override
    public void close() {
        runtime.close();
    }
}
