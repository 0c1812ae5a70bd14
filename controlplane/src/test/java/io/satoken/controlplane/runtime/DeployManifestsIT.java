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
import io.kubernetes.client.openapi.apis.NetworkingV1Api;
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
import io.kubernetes.client.openapi.models.V1NetworkPolicy;
import io.kubernetes.client.openapi.models.V1ObjectMeta;
import io.kubernetes.client.openapi.models.V1Pod;
import io.kubernetes.client.openapi.models.V1PodSpec;
import io.kubernetes.client.openapi.models.V1PodTemplateSpec;
import io.kubernetes.client.openapi.models.V1PolicyRule;
import io.kubernetes.client.openapi.models.V1ResourceAttributes;
import io.kubernetes.client.openapi.models.V1Secret;
import io.kubernetes.client.openapi.models.V1Service;
import io.kubernetes.client.openapi.models.V1ServiceAccount;
import io.kubernetes.client.openapi.models.V1ServicePort;
import io.kubernetes.client.openapi.models.V1SubjectAccessReview;
import io.kubernetes.client.openapi.models.V1SubjectAccessReviewSpec;
import io.kubernetes.client.openapi.models.V1Toleration;
import io.kubernetes.client.openapi.models.V1ValidatingWebhook;
import io.kubernetes.client.openapi.models.V1ValidatingWebhookConfiguration;
import io.kubernetes.client.openapi.models.V1Volume;
import io.kubernetes.client.util.Yaml;
import io.satoken.common.testing.KubeApiServer;
import io.satoken.common.testing.Manifests;
import io.satoken.common.testing.RequiresKubeApiServer;
import io.satoken.controlplane.testing.DeployedManifests;
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
import java.util.Optional;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * {@code controlplane/deploy/} against a real API server. Two Deployments with two identities: the
 * controllers (on control-plane nodes only; the signing key only with the opt-in Component legacy-tokens/) and
 * the admission webhook (no key, reads only). The RBAC each is given is enough for its code (the controllers
 * run as their ServiceAccount, with leader election and v1.17 auto-create so every verb is used;
 * {@link DeployedWebhookIT} runs the webhook as its own) and, checked by SubjectAccessReview, no more than that code calls. The Deployments, their pods
 * (under the restricted Pod Security level), the webhook's Service and the two webhook configurations pass
 * server-side validation; the files agree with each other and with the code on names, ports and paths; the
 * token webhook skips no namespace; and the agent's consumer example meets the restricted level.
 */
@RequiresKubeApiServer
class DeployManifestsIT {

    static final Path DEPLOY = Path.of("deploy");
    static final Path AGENT_DEPLOY = Path.of("..", "agent", "deploy");
    static final String NS = "satoken-controlplane";
    static final String WEBHOOK_NS = "satoken-webhook";
    static final String CONTROLLERS = "system:serviceaccount:" + NS + ":satoken-controlplane";
    static final String WEBHOOK = "system:serviceaccount:" + WEBHOOK_NS + ":satoken-webhook";
    static final Path LEGACY_TOKENS = DEPLOY.resolve(DeployedManifests.LEGACY_TOKENS);
    static final Path INJECTION_CHECK = DEPLOY.resolve("injection-check");
    static final Path INJECTION_CHECK_EVICT = DEPLOY.resolve("injection-check-delete");

    /**
     * Every controller, the opt-in tokens controller too (the base and the Component legacy-tokens/ together:
     * their RBAC, and the args the Component leaves), with leader election and v1.17 auto-create, so that every
     * verb the manifests grant is used.
     */
    @Test
    void controllersRunWithExactlyTheManifestsPermissions(KubeApiServer server) throws Exception {
        Manifests.apply(server, DEPLOY.resolve("00-namespace.yaml"));
        Manifests.apply(server, DEPLOY.resolve("10-rbac.yaml"));
        Manifests.apply(server, LEGACY_TOKENS.resolve("rbac.yaml"));
        V1Deployment controllers = controllersDeployment();
        List<String> args = DeployedManifests.withLegacyTokens(DEPLOY, controllers);
        String token = server.serviceAccountToken(NS,
                controllers.getSpec().getTemplate().getSpec().getServiceAccountName());
        ApiClient client = server.clientFor(token);
        ApiClient watchClient = server.clientFor(token);
        watchClient.setReadTimeout(0);
        ControlplaneRuntime.LeaderElection election = new ControlplaneRuntime.LeaderElection(NS,
                "satoken-controlplane", "deploy-it", Duration.ofSeconds(15), Duration.ofSeconds(10), Duration.ofSeconds(2));
        CoreV1Api admin = new CoreV1Api(server.adminClient());
        try (ControlplaneRuntime runtime = new ControlplaneRuntime(new ControlplaneRuntime.Settings(
                ControllerSelection.parse(arg(args, "--controllers").orElseThrow()),
                ServiceAccountSigner.load(server.serviceAccountSigningKey()),
                RootCaBundle.load(server.servingCertificate()), true, 2, new InetSocketAddress("127.0.0.1", 0), election,
                null),
                client, watchClient, client)) {
            ControlplaneIT.runInBackground(runtime);

            String ns = server.createNamespace("rbac");
            V1ServiceAccount sa = await().atMost(Duration.ofSeconds(30)).ignoreExceptions().until(
                    () -> admin.readNamespacedServiceAccount("default", ns).execute(),
                    a -> a.getSecrets() != null && !a.getSecrets().isEmpty());
            // root-ca lists and watches kube-root-ca.crt by name only: the resourceNames rule is enough
            assertThat(admin.readNamespacedConfigMap("kube-root-ca.crt", ns).execute().getData()).containsKey("ca.crt");
            String secretName = sa.getSecrets().get(0).getName();
            V1Secret secret = admin.readNamespacedSecret(secretName, ns).execute();
            assertThat(secret.getData()).containsKeys("token", "namespace", "ca.crt");
            assertThat(new CoordinationV1Api(server.adminClient()).readNamespacedLease("satoken-controlplane", NS)
                    .execute().getSpec().getHolderIdentity()).isEqualTo("deploy-it");
            // and repairs an edited one (update, limited to that name)
            var cm = admin.readNamespacedConfigMap("kube-root-ca.crt", ns).execute();
            admin.replaceNamespacedConfigMap("kube-root-ca.crt", ns, cm.data(Map.of("ca.crt", "edited"))).execute();
            await().atMost(Duration.ofSeconds(30)).until(() -> !"edited".equals(
                    admin.readNamespacedConfigMap("kube-root-ca.crt", ns).execute().getData().get("ca.crt")));

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
    void controllersDeploymentPassesServerSideValidation_andStaysOnControlPlaneNodes(KubeApiServer server)
            throws Exception {
        Manifests.apply(server, DEPLOY.resolve("00-namespace.yaml"));

        V1Deployment dryRun = new AppsV1Api(server.adminClient()).createNamespacedDeployment(NS, controllersDeployment())
                .dryRun("All").execute();

        assertThat(dryRun.getSpec().getReplicas()).isEqualTo(2);
        V1PodSpec pod = dryRun.getSpec().getTemplate().getSpec();
        assertThat(pod.getContainers().get(0).getArgs())
                .contains("--controllers=*", "--leader-elect=true")
                .noneMatch(a -> a.startsWith("--webhook-address") || a.startsWith("--tls-")
                        || a.startsWith("--agent-service-account") || a.startsWith("--service-account-private-key-file"));
        // the tokens controller is off unless named, and with it the signing key: no volume holds one
        assertThat(ControllerSelection.parse(arg(dryRun, "--controllers").orElseThrow())).doesNotContain("tokens");
        assertThat(pod.getVolumes()).allSatisfy(v -> {
            assertThat(v.getSecret()).as(v.getName()).isNull();
            assertThat(v.getHostPath()).as(v.getName()).isNull();
        });
        // the token that escalates ClusterRoles stays off workers' nodes
        // (and on Linux; ImageRecordsE2E checks the architectures against the images')
        assertThat(pod.getNodeSelector()).containsOnly(Map.entry("node-role.kubernetes.io/control-plane", ""),
                Map.entry("kubernetes.io/os", "linux"));
        assertThat(pod.getTolerations()).extracting(V1Toleration::getKey, V1Toleration::getOperator,
                V1Toleration::getEffect).contains(org.assertj.core.groups.Tuple.tuple(
                        "node-role.kubernetes.io/control-plane", "Exists", "NoSchedule"));
        assertThat(pod.getServiceAccountName()).isEqualTo("satoken-controlplane");
    }

    @Test
    void webhookDeploymentPassesServerSideValidation_andHoldsNoSigningKey(KubeApiServer server) throws Exception {
        Manifests.apply(server, DEPLOY.resolve("00-namespace.yaml"));
        V1Deployment file = webhookDeployment();

        V1Deployment dryRun = new AppsV1Api(server.adminClient())
                .createNamespacedDeployment(file.getMetadata().getNamespace(), file).dryRun("All").execute();

        assertThat(dryRun.getMetadata().getNamespace()).isEqualTo(WEBHOOK_NS).isNotEqualTo(NS);
        assertThat(dryRun.getSpec().getReplicas()).isEqualTo(2);
        V1PodSpec pod = dryRun.getSpec().getTemplate().getSpec();
        assertThat(pod.getServiceAccountName()).isEqualTo("satoken-webhook");
        // as the kubelet expands $(AGENT_NAMESPACE)/$(AGENT_ACCOUNT) from the container's env
        List<String> args = DeployedManifests.args(dryRun);
        assertThat(args).contains("--webhook-address=0.0.0.0:9443", "--tls-cert-file=/etc/satoken/webhook-tls/tls.crt",
                        "--tls-private-key-file=/etc/satoken/webhook-tls/tls.key",
                        "--agent-service-account=" + agentServiceAccount(), "--leader-elect=false")
                .noneMatch(a -> a.startsWith("--service-account-private-key-file"));
        // no controller, so no Lease and nothing that needs the controllers' RBAC
        assertThat(ControllerSelection.parse(arg(dryRun, "--controllers").orElseThrow())).isEmpty();
        // finding 3: the signing key never reaches the webhook's pods, nor any Secret but its certificate
        assertThat(pod.getVolumes()).filteredOn(v -> v.getSecret() != null)
                .extracting(v -> v.getSecret().getSecretName()).containsExactly("satoken-webhook-tls");
        assertThat(pod.getVolumes()).filteredOn(v -> v.getProjected() != null)
                .flatExtracting(v -> v.getProjected().getSources())
                .noneMatch(s -> s.getSecret() != null);
        // only the API server may call it: its client certificate's CA, from a ConfigMap
        assertThat(args).contains("--client-ca-file=/etc/satoken/client-ca/ca.crt");
        assertThat(pod.getVolumes()).filteredOn(v -> v.getConfigMap() != null)
                .extracting(v -> v.getConfigMap().getName()).containsExactly("satoken-webhook-client-ca");
        // a rollout loses no review: replicas spread over nodes (required, yet a surge pod fits), a new one ready for
        // minReadySeconds before an old one goes, and a stopped one given the time its drain takes
        assertThat(dryRun.getSpec().getStrategy().getRollingUpdate().getMaxUnavailable().getIntValue()).isZero();
        assertThat(dryRun.getSpec().getMinReadySeconds()).isPositive();
        assertThat(pod.getTopologySpreadConstraints()).singleElement().satisfies(c -> {
            assertThat(c.getTopologyKey()).isEqualTo("kubernetes.io/hostname");
            assertThat(c.getWhenUnsatisfiable()).isEqualTo("DoNotSchedule");
            assertThat(c.getMaxSkew()).isEqualTo(1);
            assertThat(c.getLabelSelector().getMatchLabels()).containsExactly(
                    Map.entry("app.kubernetes.io/name", "satoken-webhook"));
        });
        assertThat(dryRun.getSpec().getTemplate().getMetadata().getLabels())
                .containsEntry("app.kubernetes.io/name", "satoken-webhook");
        long drain = java.time.Duration.parse("PT" + arg(args, "--webhook-drain-delay").orElseThrow()
                .toUpperCase(java.util.Locale.ROOT)).toSeconds();
        // the drain delay, the 8 s review deadline and 2 s to write the answers, with room for the JVM's exit
        assertThat(pod.getTerminationGracePeriodSeconds()).isGreaterThan(drain + 8 + 2);
    }

    /**
     * The NetworkPolicy is admitted, selects the webhook's pods, and names ports the webhook's container has: the
     * webhook port from its ipBlock only, the metrics port from anywhere.
     */
    @Test
    void webhookNetworkPolicy_passesServerSideValidation_andAdmitsTheWebhookPortFromItsIpBlockOnly(
            KubeApiServer server) throws Exception {
        Manifests.apply(server, DEPLOY.resolve("00-namespace.yaml"));
        V1NetworkPolicy file = (V1NetworkPolicy) Yaml.loadAll(DEPLOY.resolve("50-webhook-network-policy.yaml").toFile())
                .get(0);

        // read as JSON: API servers before 1.27 answer a status the client's model no longer has
        ApiClient client = server.adminClient();
        com.google.gson.JsonObject spec = client.<com.google.gson.JsonObject>execute(new NetworkingV1Api(client)
                .createNamespacedNetworkPolicy(file.getMetadata().getNamespace(), file).dryRun("All").buildCall(null),
                com.google.gson.JsonObject.class).getData().getAsJsonObject("spec");

        V1PodTemplateSpec template = webhookDeployment().getSpec().getTemplate();
        assertThat(template.getMetadata().getLabels()).containsAllEntriesOf(Map.of("app.kubernetes.io/name",
                spec.getAsJsonObject("podSelector").getAsJsonObject("matchLabels").get("app.kubernetes.io/name")
                        .getAsString()));
        assertThat(spec.get("policyTypes").toString()).isEqualTo("[\"Ingress\"]");
        assertThat(spec.get("ingress").toString()).isEqualTo("[{\"ports\":[{\"protocol\":\"TCP\",\"port\":\"webhook\"}],"
                + "\"from\":[{\"ipBlock\":{\"cidr\":\"192.0.2.0/24\"}}]},"
                + "{\"ports\":[{\"protocol\":\"TCP\",\"port\":\"metrics\"}]}]");
        assertThat(template.getSpec().getContainers().get(0).getPorts()).extracting(V1ContainerPort::getName)
                .contains("webhook", "metrics");
    }

    /** A Deployment is only warned about; a pod is what Pod Security admission refuses. */
    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {"satoken-controlplane", "satoken-webhook"})
    void podMeetsItsNamespacesRestrictedLevel(String deployment, KubeApiServer server) throws Exception {
        Manifests.apply(server, DEPLOY.resolve("00-namespace.yaml"));
        CoreV1Api core = new CoreV1Api(server.adminClient());
        V1Deployment d = deployments().stream().filter(x -> x.getMetadata().getName().equals(deployment))
                .findFirst().orElseThrow();
        String ns = d.getMetadata().getNamespace();
        V1PodTemplateSpec template = d.getSpec().getTemplate();
        V1Pod pod = new V1Pod().metadata(new V1ObjectMeta().generateName(deployment + "-")
                .labels(template.getMetadata().getLabels())).spec(template.getSpec().overhead(null));
        // (client-java's models start overhead as {}, which RuntimeClass admission refuses without a RuntimeClass)

        V1Pod dryRun = core.createNamespacedPod(ns, pod).dryRun("All").execute();

        assertThat(dryRun.getSpec().getSecurityContext().getRunAsUser()).isEqualTo(65532L);
        assertThat(dryRun.getSpec().getContainers().get(0).getVolumeMounts())
                .anySatisfy(m -> assertThat(m.getMountPath()).isEqualTo("/var/run/secrets/kubernetes.io/serviceaccount"));
        // the level is really enforced here: a hostPath volume is refused
        pod.getSpec().addVolumesItem(new V1Volume().name("host").hostPath(new V1HostPathVolumeSource().path("/var")));
        assertThatThrownBy(() -> core.createNamespacedPod(ns, pod).dryRun("All").execute())
                .isInstanceOfSatisfying(ApiException.class, e -> {
                    assertThat(e.getCode()).isEqualTo(403);
                    assertThat(e.getResponseBody()).contains("restricted");
                });
    }

    /**
     * The agent's consumer example (the pod docs/csi.md deploys, asking for tokens with a CSI inline volume)
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
        List<Object> configurations = Yaml.loadAll(DEPLOY.resolve("webhooks/webhook-configurations.yaml").toFile());
        AdmissionregistrationV1Api admission = new AdmissionregistrationV1Api(server.adminClient());

        V1Service serviceDryRun = new CoreV1Api(server.adminClient())
                .createNamespacedService(service.getMetadata().getNamespace(), service).dryRun("All").execute();
        List<V1MutatingWebhook> pods = admission.createMutatingWebhookConfiguration(
                (V1MutatingWebhookConfiguration) configurations.get(0)).dryRun("All").execute().getWebhooks();
        V1MutatingWebhook mutating = pods.get(0);
        V1MutatingWebhook kubeSystem = pods.get(1);
        V1ValidatingWebhookConfiguration validatingFile = (V1ValidatingWebhookConfiguration) configurations.get(1);
        V1ValidatingWebhook validating = admission.createValidatingWebhookConfiguration(validatingFile)
                .dryRun("All").execute().getWebhooks().get(0);

        // the Service reaches the webhook's pods, and only those, on the webhook's port
        V1Deployment webhook = webhookDeployment();
        V1PodTemplateSpec template = webhook.getSpec().getTemplate();
        V1Container container = template.getSpec().getContainers().get(0);
        V1ServicePort port = serviceDryRun.getSpec().getPorts().get(0);
        assertThat(serviceDryRun.getMetadata().getNamespace()).isEqualTo(webhook.getMetadata().getNamespace());
        assertThat(template.getMetadata().getLabels()).containsAllEntriesOf(serviceDryRun.getSpec().getSelector());
        assertThat(controllersDeployment().getSpec().getTemplate().getMetadata().getLabels())
                .as("the controllers' pods serve no webhook").doesNotContainEntry("app.kubernetes.io/name",
                        serviceDryRun.getSpec().getSelector().get("app.kubernetes.io/name"));
        assertThat(port.getPort()).isEqualTo(443);
        assertThat(container.getPorts()).filteredOn(p -> "webhook".equals(p.getName()))
                .extracting(V1ContainerPort::getContainerPort).containsExactly(port.getTargetPort().getIntValue());
        assertThat(container.getArgs()).contains("--webhook-address=0.0.0.0:" + port.getTargetPort().getIntValue());

        // the configurations call that Service on the paths the webhook serves
        assertThat(mutating.getName()).isEqualTo("pods.serviceaccount.satoken.io");
        assertThat(mutating.getClientConfig().getService()).isEqualTo(serviceReference(service,
                AdmissionWebhook.MUTATE_PODS));
        assertThat(mutating.getRules()).extracting(r -> r.getOperations() + " " + r.getResources())
                .containsExactly("[CREATE] [pods]", "[UPDATE] [pods/ephemeralcontainers]");
        assertThat(List.of(mutating.getFailurePolicy(), mutating.getReinvocationPolicy(), mutating.getMatchPolicy(),
                mutating.getSideEffects())).containsExactly("Fail", "IfNeeded", "Equivalent", "None");
        // the pods webhook skips the namespace it runs in, so that it can start (not the controllers'), and
        // kube-system, which the second one serves, failing open: a dead webhook cannot stop the cluster's own pods
        assertThat(mutating.getNamespaceSelector()).isEqualTo(skips("kube-system", webhook.getMetadata().getNamespace()));
        assertThat(pods).hasSize(2);
        assertThat(kubeSystem.getName()).isEqualTo("kube-system.pods.serviceaccount.satoken.io");
        assertThat(kubeSystem.getFailurePolicy()).isEqualTo("Ignore");
        assertThat(kubeSystem.getNamespaceSelector()).isEqualTo(new V1LabelSelector().addMatchExpressionsItem(
                new V1LabelSelectorRequirement().key("kubernetes.io/metadata.name").operator("In")
                        .values(List.of("kube-system"))));
        assertThat(kubeSystem.getRules()).isEqualTo(mutating.getRules());
        assertThat(kubeSystem.getClientConfig()).isEqualTo(mutating.getClientConfig());
        assertThat(validating.getName()).isEqualTo("serviceaccount-token.satoken.io");
        assertThat(validating.getClientConfig().getService()).isEqualTo(serviceReference(service,
                AdmissionWebhook.VALIDATE_TOKEN_REQUESTS));
        assertThat(validating.getRules()).extracting(r -> r.getOperations() + " " + r.getResources())
                .containsExactly("[CREATE] [serviceaccounts/token]");
        assertThat(List.of(validating.getFailurePolicy(), validating.getMatchPolicy(), validating.getSideEffects()))
                .containsExactly("Fail", "Equivalent", "None");
        // checked in the file: API servers before 1.28 drop matchConditions
        String[] agent = agentServiceAccount().split("/");
        // (the Component deploy/agent-identity writes the namespace and the name into the 4th and 8th quoted fields)
        assertThat(validatingFile.getWebhooks().get(0).getMatchConditions()).extracting(V1MatchCondition::getExpression)
                .containsExactly("request.userInfo.username == 'system:serviceaccount:' + '" + agent[0] + "' + ':' + '"
                        + agent[1] + "'");
    }

    /**
     * Finding 1: a namespace the token webhook skips is one whose ServiceAccounts any agent can mint unbound
     * tokens for; the control plane's was. The file sets no namespaceSelector, and the server's default
     * selects every namespace.
     */
    @Test
    void tokenWebhook_skipsNoNamespace(KubeApiServer server) throws Exception {
        V1ValidatingWebhookConfiguration file = (V1ValidatingWebhookConfiguration) Yaml.loadAll(
                DEPLOY.resolve("webhooks/webhook-configurations.yaml").toFile()).get(1);
        V1ValidatingWebhook validating = file.getWebhooks().get(0);
        assertThat(validating.getNamespaceSelector()).as("namespaceSelector in the file").isNull();
        assertThat(validating.getObjectSelector()).as("objectSelector in the file").isNull();

        V1ValidatingWebhook stored = new AdmissionregistrationV1Api(server.adminClient())
                .createValidatingWebhookConfiguration(file).dryRun("All").execute().getWebhooks().get(0);

        assertThat(stored.getNamespaceSelector()).isEqualTo(new V1LabelSelector());
        assertThat(stored.getObjectSelector()).isEqualTo(new V1LabelSelector());
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
        V1Deployment webhook = webhookDeployment();
        V1PodTemplateSpec template = webhook.getSpec().getTemplate();

        assertThat(spec.get("dnsNames")).isEqualTo(List.of(host, host + ".cluster.local"));
        assertThat(metadata.get("namespace")).as("the Secret is made where the webhook mounts it")
                .isEqualTo(webhook.getMetadata().getNamespace());
        assertThat(template.getSpec().getVolumes()).filteredOn(v -> "webhook-tls".equals(v.getName()))
                .extracting(v -> v.getSecret().getSecretName()).containsExactly((String) spec.get("secretName"));
        assertThat(template.getSpec().getContainers().get(0).getVolumeMounts())
                .filteredOn(m -> "webhook-tls".equals(m.getName()))
                .extracting(m -> m.getMountPath() + "/tls.crt").containsExactly("/etc/satoken/webhook-tls/tls.crt");
        for (Object configuration : Yaml.loadAll(DEPLOY.resolve("webhooks/webhook-configurations.yaml").toFile())) {
            V1ObjectMeta meta = configuration instanceof V1MutatingWebhookConfiguration m ? m.getMetadata()
                    : ((V1ValidatingWebhookConfiguration) configuration).getMetadata();
            assertThat(meta.getAnnotations()).containsEntry("cert-manager.io/inject-ca-from",
                    metadata.get("namespace") + "/" + metadata.get("name"));
        }
    }

    /**
     * One access a ServiceAccount of the manifests asks the API server about: granted exactly when its code
     * makes that call. {@code name} is the object's name, or for list and watch the metadata.name field
     * selector the code sends (RBAC matches it against resourceNames); empty for none.
     */
    record Access(String why, String user, String verb, String resource, String namespace, String name,
            boolean allowed) {
        @Override
        public String toString() {
            return (user.equals(WEBHOOK) ? "webhook: " : "controllers: ") + why;
        }
    }

    static Access webhook(String why, String verb, String resource, String namespace, boolean allowed) {
        return new Access(why, WEBHOOK, verb, resource, namespace, "", allowed);
    }

    static Access controllers(String why, String verb, String resource, String namespace, String name,
            boolean allowed) {
        return new Access(why, CONTROLLERS, verb, resource, namespace, name, allowed);
    }

    static Stream<Access> access() {
        return Stream.of(
                // the webhook: ServiceAccount admission (AD-4) and node-scoped token requests, nothing else
                webhook("node-scoped token requests: get a pod", "get", "pods", "default", true),
                webhook("no pod list", "list", "pods", "", false),
                webhook("no pod watch", "watch", "pods", "", false),
                webhook("AD-4: get a ServiceAccount live", "get", "serviceaccounts", "default", true),
                webhook("AD-4: list ServiceAccounts (cache)", "list", "serviceaccounts", "", true),
                webhook("AD-4: watch ServiceAccounts (cache)", "watch", "serviceaccounts", "", true),
                webhook("writes no ServiceAccount", "update", "serviceaccounts", "default", false),
                webhook("no Secret: get", "get", "secrets", NS, false),
                webhook("no Secret: list", "list", "secrets", "", false),
                webhook("no Secret: watch", "watch", "secrets", "", false),
                webhook("no ConfigMap: get", "get", "configmaps", "default", false),
                webhook("no ConfigMap: update", "update", "configmaps", "default", false),
                webhook("no ClusterRole: list", "list", "clusterroles", "", false),
                webhook("no ClusterRole: patch", "patch", "clusterroles", "", false),
                webhook("no ClusterRole: escalate", "escalate", "clusterroles", "", false),
                webhook("no Lease: no leader election", "create", "leases", NS, false),
                webhook("no token requests", "create", "serviceaccounts/token", NS, false),
                webhook("no namespaces", "list", "namespaces", "", false),

                // tokens (RBAC of the Component legacy-tokens/, applied with the base here)
                controllers("tokens: cache ServiceAccounts", "list", "serviceaccounts", "", "", true),
                controllers("tokens: watch ServiceAccounts", "watch", "serviceaccounts", "", "", true),
                controllers("tokens: read a ServiceAccount live", "get", "serviceaccounts", "default", "x", true),
                controllers("tokens: edit .secrets (a patch)", "patch", "serviceaccounts", "default", "x", true),
                controllers("tokens: no ServiceAccount delete", "delete", "serviceaccounts", "default", "x", false),
                controllers("tokens: no ServiceAccount update (PUT)", "update", "serviceaccounts", "default", "x", false),
                controllers("tokens: cache token Secrets", "list", "secrets", "", "", true),
                controllers("tokens: watch token Secrets", "watch", "secrets", "", "", true),
                controllers("tokens: read a Secret live", "get", "secrets", "default", "x", true),
                controllers("tokens: create a token Secret", "create", "secrets", "default", "", true),
                controllers("tokens: fill a token Secret (a patch)", "patch", "secrets", "default", "x", true),
                controllers("tokens: delete a token Secret", "delete", "secrets", "default", "x", true),
                controllers("tokens: no Secret update (PUT)", "update", "secrets", "default", "x", false),
                controllers("no token requests", "create", "serviceaccounts/token", "default", "x", false),
                // serviceaccounts
                controllers("serviceaccounts: list namespaces", "list", "namespaces", "", "", true),
                controllers("serviceaccounts: watch namespaces", "watch", "namespaces", "", "", true),
                controllers("no namespace get", "get", "namespaces", "", "x", false),
                controllers("no namespace update", "update", "namespaces", "", "x", false),
                controllers("serviceaccounts: create default", "create", "serviceaccounts", "default", "", true),
                // root-ca: kube-root-ca.crt only, where RBAC can name it
                controllers("root-ca: create kube-root-ca.crt", "create", "configmaps", "default", "", true),
                controllers("root-ca: list kube-root-ca.crt", "list", "configmaps", "", "kube-root-ca.crt", true),
                controllers("root-ca: watch kube-root-ca.crt", "watch", "configmaps", "", "kube-root-ca.crt", true),
                controllers("root-ca: patch kube-root-ca.crt", "patch", "configmaps", "default", "kube-root-ca.crt",
                        true),
                controllers("no patch of another ConfigMap", "patch", "configmaps", "default", "app-config", false),
                controllers("no list of every ConfigMap", "list", "configmaps", "", "", false),
                controllers("no watch of every ConfigMap", "watch", "configmaps", "", "", false),
                controllers("no ConfigMap get (the cache serves)", "get", "configmaps", "default", "kube-root-ca.crt",
                        false),
                controllers("no ConfigMap update (PUT)", "update", "configmaps", "default", "kube-root-ca.crt", false),
                controllers("no ConfigMap delete", "delete", "configmaps", "default", "kube-root-ca.crt", false),
                // aggregation
                controllers("aggregation: list ClusterRoles", "list", "clusterroles", "", "", true),
                controllers("aggregation: watch ClusterRoles", "watch", "clusterroles", "", "", true),
                controllers("aggregation: server-side apply", "patch", "clusterroles", "", "x", true),
                controllers("aggregation: no update (PUT), a patch on 415", "update", "clusterroles", "", "x", false),
                controllers("aggregation: write rules it does not hold", "escalate", "clusterroles", "", "x", true),
                controllers("no ClusterRole create", "create", "clusterroles", "", "", false),
                controllers("no ClusterRole delete", "delete", "clusterroles", "", "x", false),
                controllers("no bind", "bind", "clusterroles", "", "x", false),
                // the webhook's reads are the webhook's
                controllers("no pod get (the webhook's)", "get", "pods", "default", "x", false),
                // leader election: one Lease in its own namespace
                controllers("leader election: create the Lease", "create", "leases", NS, "", true),
                controllers("leader election: renew the Lease (a patch)", "patch", "leases", NS, "satoken-controlplane", true),
                controllers("no other Lease", "patch", "leases", NS, "kube-scheduler", false),
                controllers("no Lease elsewhere", "patch", "leases", "kube-system", "satoken-controlplane", false),
                // injection-check (RBAC of the Components injection-check/ and injection-check-delete/, applied here)
                controllers("injection-check: cache pods", "list", "pods", "", "", true),
                controllers("injection-check: watch pods", "watch", "pods", "", "", true),
                controllers("injection-check: a Warning Event", "create", "events", "default", "", true),
                controllers("injection-check: read a ReplicaSet's template live", "get", "replicasets", "default", "x",
                        true),
                controllers("injection-check: read a StatefulSet's", "get", "statefulsets", "default", "x", true),
                controllers("injection-check: read a DaemonSet's", "get", "daemonsets", "default", "x", true),
                controllers("injection-check: read a Job's", "get", "jobs", "default", "x", true),
                controllers("injection-check: no ReplicaSet list (no cache)", "list", "replicasets", "", "", false),
                controllers("injection-check: no Deployment get", "get", "deployments", "default", "x", false),
                controllers("injection-check: no ReplicaSet patch", "patch", "replicasets", "default", "x", false),
                controllers("injection-check: no Job delete", "delete", "jobs", "default", "x", false),
                controllers("injection-check-delete: evict a pod (PodDisruptionBudgets hold)", "create",
                        "pods/eviction", "default", "x", true),
                controllers("injection-check-delete: no pod delete (it would skip PodDisruptionBudgets)", "delete",
                        "pods", "default", "x", false),
                controllers("injection-check: no pod patch", "patch", "pods", "default", "x", false),
                controllers("injection-check: no pod update", "update", "pods", "default", "x", false),
                controllers("injection-check: no Event update", "patch", "events", "default", "x", false));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("access")
    void rbacGrantsEachIdentityExactlyWhatItsCodeCalls(Access access, KubeApiServer server) throws Exception {
        Manifests.apply(server, DEPLOY.resolve("00-namespace.yaml"));
        Manifests.apply(server, DEPLOY.resolve("10-rbac.yaml"));
        Manifests.apply(server, LEGACY_TOKENS.resolve("rbac.yaml"));
        Manifests.apply(server, INJECTION_CHECK.resolve("rbac.yaml"));
        Manifests.apply(server, INJECTION_CHECK_EVICT.resolve("rbac.yaml"));
        String namespace = access.user().split(":")[2];
        String[] resource = access.resource().split("/");
        String group = switch (resource[0]) {
            case "leases" -> "coordination.k8s.io";
            case "clusterroles" -> "rbac.authorization.k8s.io";
            case "replicasets", "statefulsets", "daemonsets", "deployments" -> "apps";
            case "jobs" -> "batch";
            default -> "";
        };
        V1SubjectAccessReview review = new V1SubjectAccessReview().spec(new V1SubjectAccessReviewSpec()
                .user(access.user())
                .groups(List.of("system:serviceaccounts", "system:serviceaccounts:" + namespace, "system:authenticated"))
                .resourceAttributes(new V1ResourceAttributes().verb(access.verb()).group(group).resource(resource[0])
                        .subresource(resource.length > 1 ? resource[1] : null).namespace(access.namespace())
                        .name(access.name().isEmpty() ? null : access.name())));

        boolean allowed = new AuthorizationV1Api(server.adminClient()).createSubjectAccessReview(review).execute()
                .getStatus().getAllowed();

        assertThat(allowed).as("%s: %s %s %s", access, access.verb(), access.resource(), access.name())
                .isEqualTo(access.allowed());
    }

    /** Every Deployment in {@code deploy/}, in file order. */
    static List<V1Deployment> deployments() throws IOException {
        List<V1Deployment> found = DeployedManifests.deployments(DEPLOY);
        assertThat(found).extracting(d -> d.getMetadata().getName())
                .containsExactly("satoken-controlplane", "satoken-webhook");
        return found;
    }

    static V1Deployment controllersDeployment() throws IOException {
        return deployments().get(0);
    }

    static V1Deployment webhookDeployment() throws IOException {
        return deployments().get(1);
    }

    /** The value of {@code flag} in the Deployment's container args. */
    static Optional<String> arg(V1Deployment deployment, String flag) {
        return arg(deployment.getSpec().getTemplate().getSpec().getContainers().get(0).getArgs(), flag);
    }

    /** The value of {@code flag} in {@code args}. */
    static Optional<String> arg(List<String> args, String flag) {
        return args.stream().filter(a -> a.startsWith(flag + "=")).map(a -> a.substring(flag.length() + 1))
                .findFirst();
    }

    /** NAMESPACE/NAME of the agent's ServiceAccount, from the agent's identity base (agent/deploy/identity). */
    static String agentServiceAccount() throws IOException {
        List<String> accounts = new ArrayList<>();
        for (Object o : Yaml.loadAll(AGENT_DEPLOY.resolve("identity/serviceaccount.yaml").toFile())) {
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

    static V1LabelSelector skips(String... namespaces) {
        return new V1LabelSelector().addMatchExpressionsItem(new V1LabelSelectorRequirement()
                .key("kubernetes.io/metadata.name").operator("NotIn").values(List.of(namespaces)));
    }
}
