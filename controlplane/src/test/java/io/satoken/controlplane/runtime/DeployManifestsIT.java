package io.satoken.controlplane.runtime;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.kubernetes.client.openapi.ApiClient;
import io.kubernetes.client.openapi.ApiException;
import io.kubernetes.client.openapi.apis.AdmissionregistrationV1Api;
import io.kubernetes.client.openapi.apis.AppsV1Api;
import io.kubernetes.client.openapi.apis.AuthorizationV1Api;
import io.kubernetes.client.openapi.apis.CoordinationV1Api;
import io.kubernetes.client.openapi.apis.CoreV1Api;
import io.kubernetes.client.openapi.apis.RbacAuthorizationV1Api;
import io.kubernetes.client.openapi.models.AdmissionregistrationV1ServiceReference;
import io.kubernetes.client.openapi.models.V1AggregationRule;
import io.kubernetes.client.openapi.models.V1ClusterRole;
import io.kubernetes.client.openapi.models.V1Container;
import io.kubernetes.client.openapi.models.V1ContainerPort;
import io.kubernetes.client.openapi.models.V1Deployment;
import io.kubernetes.client.openapi.models.V1HostPathVolumeSource;
import io.kubernetes.client.openapi.models.V1LabelSelector;
import io.kubernetes.client.openapi.models.V1LabelSelectorRequirement;
import io.kubernetes.client.openapi.models.V1MatchCondition;
import io.kubernetes.client.openapi.models.V1MutatingWebhook;
import io.kubernetes.client.openapi.models.V1MutatingWebhookConfiguration;
import io.kubernetes.client.openapi.models.V1ObjectMeta;
import io.kubernetes.client.openapi.models.V1Pod;
import io.kubernetes.client.openapi.models.V1PodTemplateSpec;
import io.kubernetes.client.openapi.models.V1PolicyRule;
import io.kubernetes.client.openapi.models.V1ResourceAttributes;
import io.kubernetes.client.openapi.models.V1Secret;
import io.kubernetes.client.openapi.models.V1Service;
import io.kubernetes.client.openapi.models.V1ServiceAccount;
import io.kubernetes.client.openapi.models.V1ServicePort;
import io.kubernetes.client.openapi.models.V1SubjectAccessReview;
import io.kubernetes.client.openapi.models.V1SubjectAccessReviewSpec;
import io.kubernetes.client.openapi.models.V1ValidatingWebhook;
import io.kubernetes.client.openapi.models.V1ValidatingWebhookConfiguration;
import io.kubernetes.client.openapi.models.V1Volume;
import io.kubernetes.client.util.Yaml;
import io.satoken.common.testing.KubeApiServer;
import io.satoken.common.testing.Manifests;
import io.satoken.common.testing.RequiresKubeApiServer;
import io.satoken.controlplane.admission.AdmissionWebhook;
import io.satoken.controlplane.jwt.ServiceAccountSigner;
import io.satoken.controlplane.rootca.RootCaBundle;
import java.io.IOException;
import java.io.Reader;
import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * {@code controlplane/deploy/} against a real API server: the RBAC it grants is enough for every controller
 * (run as that ServiceAccount, with leader election and v1.17 auto-create so every verb is used) and for the
 * admission webhook's reads; the Deployment, its pod (under the namespace's restricted Pod Security level),
 * the webhook's Service and its two webhook configurations pass server-side validation; the files agree
 * with each other and with the code on names, ports and paths; and the agent's consumer example, the pod
 * users copy, meets the restricted level enforced here.
 */
@RequiresKubeApiServer
class DeployManifestsIT {

    static final Path DEPLOY = Path.of("deploy");
    static final Path AGENT_DEPLOY = Path.of("..", "agent", "deploy");
    static final String NS = "satoken-controlplane";
    static final String SERVICE_ACCOUNT = "system:serviceaccount:" + NS + ":satoken-controlplane";

    @Test
    void controllersRunWithExactlyTheManifestsPermissions(KubeApiServer server) throws Exception {
        Manifests.apply(server, DEPLOY.resolve("00-namespace.yaml"));
        Manifests.apply(server, DEPLOY.resolve("10-rbac.yaml"));
        String token = server.serviceAccountToken(NS, "satoken-controlplane");
        ApiClient client = server.clientFor(token);
        ApiClient watchClient = server.clientFor(token);
        watchClient.setReadTimeout(0);
        ControlplaneRuntime.LeaderElection election = new ControlplaneRuntime.LeaderElection(NS,
                "satoken-controlplane", "deploy-it", Duration.ofSeconds(15), Duration.ofSeconds(10), Duration.ofSeconds(2));
        CoreV1Api admin = new CoreV1Api(server.adminClient());
        try (ControlplaneRuntime runtime = new ControlplaneRuntime(new ControlplaneRuntime.Settings(
                ControllerSelection.parse("*"), ServiceAccountSigner.load(server.serviceAccountSigningKey()),
                RootCaBundle.load(server.servingCertificate()), true, 2, new InetSocketAddress("127.0.0.1", 0), election,
                null),
                client, watchClient)) {
            ControlplaneIT.runInBackground(runtime);

            String ns = server.createNamespace("rbac");
            V1ServiceAccount sa = await().atMost(Duration.ofSeconds(30)).ignoreExceptions().until(
                    () -> admin.readNamespacedServiceAccount("default", ns).execute(),
                    a -> a.getSecrets() != null && !a.getSecrets().isEmpty());
            assertThat(admin.readNamespacedConfigMap("kube-root-ca.crt", ns).execute().getData()).containsKey("ca.crt");
            String secretName = sa.getSecrets().get(0).getName();
            V1Secret secret = admin.readNamespacedSecret(secretName, ns).execute();
            assertThat(secret.getData()).containsKeys("token", "namespace", "ca.crt");
            assertThat(new CoordinationV1Api(server.adminClient()).readNamespacedLease("satoken-controlplane", NS)
                    .execute().getSpec().getHolderIdentity()).isEqualTo("deploy-it");

            RbacAuthorizationV1Api rbac = new RbacAuthorizationV1Api(server.adminClient());
            rbac.createClusterRole(new V1ClusterRole().metadata(new V1ObjectMeta().name(ns + "-agg"))
                    .aggregationRule(new V1AggregationRule().addClusterRoleSelectorsItem(
                            new V1LabelSelector().putMatchLabelsItem("aggregate-to", ns)))).execute();
            rbac.createClusterRole(new V1ClusterRole().metadata(new V1ObjectMeta().name(ns + "-part")
                    .putLabelsItem("aggregate-to", ns)).addRulesItem(new V1PolicyRule().addApiGroupsItem("")
                    .addResourcesItem("pods").addVerbsItem("get"))).execute();
            await().atMost(Duration.ofSeconds(30)).until(() -> {
                var rules = rbac.readClusterRole(ns + "-agg").execute().getRules();
                return rules != null && rules.size() == 1;
            });

            admin.deleteNamespacedServiceAccount("default", ns).execute(); // delete + recreate + a new token
            await().atMost(Duration.ofSeconds(30)).ignoreExceptions().until(() -> {
                try {
                    admin.readNamespacedSecret(secretName, ns).execute();
                    return false;
                } catch (io.kubernetes.client.openapi.ApiException e) {
                    return e.getCode() == 404;
                }
            });
        }
    }

    @Test
    void deploymentPassesServerSideValidation(KubeApiServer server) throws Exception {
        Manifests.apply(server, DEPLOY.resolve("00-namespace.yaml"));

        V1Deployment dryRun = new AppsV1Api(server.adminClient()).createNamespacedDeployment(NS, deployment())
                .dryRun("All").execute();

        assertThat(dryRun.getSpec().getReplicas()).isEqualTo(2);
        assertThat(dryRun.getSpec().getTemplate().getSpec().getContainers().get(0).getArgs())
                .contains("--leader-elect=true", "--service-account-private-key-file=/etc/satoken/signing-key/sa.key",
                        "--webhook-address=0.0.0.0:9443", "--tls-cert-file=/etc/satoken/webhook-tls/tls.crt",
                        "--tls-private-key-file=/etc/satoken/webhook-tls/tls.key",
                        "--agent-service-account=" + agentServiceAccount());
    }

    /** A Deployment is only warned about; a pod is what Pod Security admission refuses. */
    @Test
    void podMeetsTheNamespacesRestrictedLevel(KubeApiServer server) throws Exception {
        Manifests.apply(server, DEPLOY.resolve("00-namespace.yaml"));
        CoreV1Api core = new CoreV1Api(server.adminClient());
        V1PodTemplateSpec template = deployment().getSpec().getTemplate();
        V1Pod pod = new V1Pod().metadata(new V1ObjectMeta().generateName("satoken-controlplane-")
                .labels(template.getMetadata().getLabels())).spec(template.getSpec().overhead(null));
        // (client-java's models start overhead as {}, which RuntimeClass admission refuses without a RuntimeClass)

        V1Pod dryRun = core.createNamespacedPod(NS, pod).dryRun("All").execute();

        assertThat(dryRun.getSpec().getSecurityContext().getFsGroup()).isEqualTo(65532L);
        assertThat(dryRun.getSpec().getContainers().get(0).getVolumeMounts())
                .anySatisfy(m -> assertThat(m.getMountPath()).isEqualTo("/var/run/secrets/kubernetes.io/serviceaccount"));
        // the level is really enforced here: a hostPath volume is refused
        pod.getSpec().addVolumesItem(new V1Volume().name("host").hostPath(new V1HostPathVolumeSource().path("/var")));
        assertThatThrownBy(() -> core.createNamespacedPod(NS, pod).dryRun("All").execute())
                .isInstanceOfSatisfying(ApiException.class, e -> {
                    assertThat(e.getCode()).isEqualTo(403);
                    assertThat(e.getResponseBody()).contains("restricted");
                });
    }

    /**
     * The agent's consumer example (the pod the README deploys, asking for tokens with a CSI inline volume)
     * is admitted in a namespace enforcing the restricted level, as this namespace does.
     */
    @Test
    void agentConsumerExampleMeetsTheRestrictedLevel(KubeApiServer server) throws Exception {
        Manifests.apply(server, DEPLOY.resolve("00-namespace.yaml"));
        CoreV1Api core = new CoreV1Api(server.adminClient());
        V1Pod consumer = (V1Pod) Yaml.loadAll(AGENT_DEPLOY.resolve("examples/consumer.yaml").toFile()).get(0);
        consumer.getMetadata().namespace(NS);
        consumer.getSpec().overhead(null);

        V1Pod dryRun = core.createNamespacedPod(NS, consumer).dryRun("All").execute();

        assertThat(dryRun.getSpec().getVolumes()).anySatisfy(v -> {
            assertThat(v.getCsi().getDriver()).isEqualTo("tokens.satoken.io");
            assertThat(v.getHostPath()).isNull();
        });
    }

    @Test
    void webhookServiceAndConfigurationsPassServerSideValidation(KubeApiServer server) throws Exception {
        Manifests.apply(server, DEPLOY.resolve("00-namespace.yaml"));
        V1Service service = (V1Service) Yaml.loadAll(DEPLOY.resolve("40-webhook-service.yaml").toFile()).get(0);
        List<Object> configurations = Yaml.loadAll(DEPLOY.resolve("50-webhook-configurations.yaml").toFile());
        AdmissionregistrationV1Api admission = new AdmissionregistrationV1Api(server.adminClient());

        V1Service serviceDryRun = new CoreV1Api(server.adminClient()).createNamespacedService(NS, service)
                .dryRun("All").execute();
        V1MutatingWebhook mutating = admission.createMutatingWebhookConfiguration(
                (V1MutatingWebhookConfiguration) configurations.get(0)).dryRun("All").execute().getWebhooks().get(0);
        V1ValidatingWebhookConfiguration validatingFile = (V1ValidatingWebhookConfiguration) configurations.get(1);
        V1ValidatingWebhook validating = admission.createValidatingWebhookConfiguration(validatingFile)
                .dryRun("All").execute().getWebhooks().get(0);

        // the Service reaches the Deployment's pods on the webhook's port
        V1PodTemplateSpec template = deployment().getSpec().getTemplate();
        V1Container container = template.getSpec().getContainers().get(0);
        V1ServicePort port = serviceDryRun.getSpec().getPorts().get(0);
        assertThat(template.getMetadata().getLabels()).containsAllEntriesOf(serviceDryRun.getSpec().getSelector());
        assertThat(port.getPort()).isEqualTo(443);
        assertThat(container.getPorts()).filteredOn(p -> "webhook".equals(p.getName()))
                .extracting(V1ContainerPort::getContainerPort).containsExactly(port.getTargetPort().getIntValue());
        assertThat(container.getArgs()).contains("--webhook-address=0.0.0.0:" + port.getTargetPort().getIntValue());

        // the configurations call that Service on the paths the webhook serves, and skip its namespace
        assertThat(mutating.getName()).isEqualTo("pods.serviceaccount.satoken.io");
        assertThat(mutating.getClientConfig().getService()).isEqualTo(serviceReference(service,
                AdmissionWebhook.MUTATE_PODS));
        assertThat(mutating.getRules()).extracting(r -> r.getOperations() + " " + r.getResources())
                .containsExactly("[CREATE] [pods]", "[UPDATE] [pods/ephemeralcontainers]");
        assertThat(List.of(mutating.getFailurePolicy(), mutating.getReinvocationPolicy(), mutating.getMatchPolicy(),
                mutating.getSideEffects())).containsExactly("Fail", "IfNeeded", "Equivalent", "None");
        assertThat(mutating.getNamespaceSelector()).isEqualTo(skipsOwnNamespace());
        assertThat(validating.getName()).isEqualTo("serviceaccount-token.satoken.io");
        assertThat(validating.getClientConfig().getService()).isEqualTo(serviceReference(service,
                AdmissionWebhook.VALIDATE_TOKEN_REQUESTS));
        assertThat(validating.getRules()).extracting(r -> r.getOperations() + " " + r.getResources())
                .containsExactly("[CREATE] [serviceaccounts/token]");
        assertThat(List.of(validating.getFailurePolicy(), validating.getMatchPolicy(), validating.getSideEffects()))
                .containsExactly("Fail", "Equivalent", "None");
        assertThat(validating.getNamespaceSelector()).isEqualTo(skipsOwnNamespace());
        // checked in the file: API servers before 1.28 drop matchConditions
        String[] agent = agentServiceAccount().split("/");
        assertThat(validatingFile.getWebhooks().get(0).getMatchConditions()).extracting(V1MatchCondition::getExpression)
                .containsExactly("request.userInfo.username == 'system:serviceaccount:" + agent[0] + ":" + agent[1] + "'");
    }

    @Test
    void webhookCertificateExampleCoversTheServiceAndFillsTheMountedSecret() throws IOException {
        V1Service service = (V1Service) Yaml.loadAll(DEPLOY.resolve("40-webhook-service.yaml").toFile()).get(0);
        String host = service.getMetadata().getName() + "." + service.getMetadata().getNamespace() + ".svc";
        Map<?, ?> certificate = null;
        try (Reader reader = Files.newBufferedReader(DEPLOY.resolve("examples/webhook-certificate.yaml"))) {
            for (Object document : new org.yaml.snakeyaml.Yaml().loadAll(reader)) {
                Map<?, ?> object = (Map<?, ?>) document;
                Map<?, ?> metadata = (Map<?, ?>) object.get("metadata");
                if ("Certificate".equals(object.get("kind")) && "satoken-webhook".equals(metadata.get("name"))) {
                    certificate = object;
                }
            }
        }
        assertThat(certificate).as("Certificate satoken-webhook").isNotNull();
        Map<?, ?> metadata = (Map<?, ?>) certificate.get("metadata");
        Map<?, ?> spec = (Map<?, ?>) certificate.get("spec");
        V1PodTemplateSpec template = deployment().getSpec().getTemplate();

        assertThat(spec.get("dnsNames")).isEqualTo(List.of(host, host + ".cluster.local"));
        assertThat(template.getSpec().getVolumes()).filteredOn(v -> "webhook-tls".equals(v.getName()))
                .extracting(v -> v.getSecret().getSecretName()).containsExactly((String) spec.get("secretName"));
        assertThat(template.getSpec().getContainers().get(0).getVolumeMounts())
                .filteredOn(m -> "webhook-tls".equals(m.getName()))
                .extracting(m -> m.getMountPath() + "/tls.crt").containsExactly("/etc/satoken/webhook-tls/tls.crt");
        for (Object configuration : Yaml.loadAll(DEPLOY.resolve("50-webhook-configurations.yaml").toFile())) {
            V1ObjectMeta meta = configuration instanceof V1MutatingWebhookConfiguration m ? m.getMetadata()
                    : ((V1ValidatingWebhookConfiguration) configuration).getMetadata();
            assertThat(meta.getAnnotations()).containsEntry("cert-manager.io/inject-ca-from",
                    metadata.get("namespace") + "/" + metadata.get("name"));
        }
    }

    /** The webhook's reads, granted and no more (each as its code issues it). */
    record Access(String name, String verb, String resource, String namespace, boolean allowed) {
        @Override
        public String toString() {
            return name;
        }
    }

    static Stream<Access> webhookAccess() {
        return Stream.of(
                new Access("node-scoped token requests: get a pod", "get", "pods", "default", true),
                new Access("no pod list", "list", "pods", "", false),
                new Access("no pod watch", "watch", "pods", "", false),
                new Access("AD-4: get a ServiceAccount live", "get", "serviceaccounts", "default", true),
                new Access("AD-4: list ServiceAccounts (cache)", "list", "serviceaccounts", "", true),
                new Access("AD-4: watch ServiceAccounts (cache)", "watch", "serviceaccounts", "", true),
                new Access("AD-11: list token Secrets (cache)", "list", "secrets", "", true),
                new Access("AD-11: watch token Secrets (cache)", "watch", "secrets", "", true));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("webhookAccess")
    void rbacGrantsTheWebhooksReads(Access access, KubeApiServer server) throws Exception {
        Manifests.apply(server, DEPLOY.resolve("00-namespace.yaml"));
        Manifests.apply(server, DEPLOY.resolve("10-rbac.yaml"));
        V1SubjectAccessReview review = new V1SubjectAccessReview().spec(new V1SubjectAccessReviewSpec()
                .user(SERVICE_ACCOUNT)
                .groups(List.of("system:serviceaccounts", "system:serviceaccounts:" + NS, "system:authenticated"))
                .resourceAttributes(new V1ResourceAttributes().verb(access.verb()).resource(access.resource())
                        .namespace(access.namespace())));

        boolean allowed = new AuthorizationV1Api(server.adminClient()).createSubjectAccessReview(review).execute()
                .getStatus().getAllowed();

        assertThat(allowed).as(access.verb() + " " + access.resource()).isEqualTo(access.allowed());
    }

    static V1Deployment deployment() throws IOException {
        return (V1Deployment) Yaml.loadAll(DEPLOY.resolve("30-deployment.yaml").toFile()).get(0);
    }

    /** NAMESPACE/NAME of the agent's ServiceAccount, from the agent's own manifests. */
    static String agentServiceAccount() throws IOException {
        List<String> accounts = new ArrayList<>();
        for (Object o : Yaml.loadAll(AGENT_DEPLOY.resolve("10-rbac.yaml").toFile())) {
            if (o instanceof V1ServiceAccount sa) {
                accounts.add(sa.getMetadata().getNamespace() + "/" + sa.getMetadata().getName());
            }
        }
        assertThat(accounts).hasSize(1);
        return accounts.get(0);
    }

    static AdmissionregistrationV1ServiceReference serviceReference(V1Service service, String path) {
        return new AdmissionregistrationV1ServiceReference().namespace(service.getMetadata().getNamespace())
                .name(service.getMetadata().getName()).path(path).port(service.getSpec().getPorts().get(0).getPort());
    }

    static V1LabelSelector skipsOwnNamespace() {
        return new V1LabelSelector().addMatchExpressionsItem(new V1LabelSelectorRequirement()
                .key("kubernetes.io/metadata.name").operator("NotIn").values(List.of(NS)));
    }
}
