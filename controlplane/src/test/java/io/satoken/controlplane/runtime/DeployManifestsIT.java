package io.satoken.controlplane.runtime;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.kubernetes.client.openapi.ApiClient;
import io.kubernetes.client.openapi.apis.AppsV1Api;
import io.kubernetes.client.openapi.apis.CoordinationV1Api;
import io.kubernetes.client.openapi.apis.CoreV1Api;
import io.kubernetes.client.openapi.apis.RbacAuthorizationV1Api;
import io.kubernetes.client.openapi.models.V1AggregationRule;
import io.kubernetes.client.openapi.models.V1ClusterRole;
import io.kubernetes.client.openapi.models.V1Deployment;
import io.kubernetes.client.openapi.models.V1LabelSelector;
import io.kubernetes.client.openapi.models.V1ObjectMeta;
import io.kubernetes.client.openapi.models.V1PolicyRule;
import io.kubernetes.client.openapi.models.V1Secret;
import io.kubernetes.client.openapi.models.V1ServiceAccount;
import io.kubernetes.client.util.Yaml;
import io.satoken.common.testing.KubeApiServer;
import io.satoken.common.testing.Manifests;
import io.satoken.common.testing.RequiresKubeApiServer;
import io.satoken.controlplane.jwt.ServiceAccountSigner;
import io.satoken.controlplane.rootca.RootCaBundle;
import java.net.InetSocketAddress;
import java.nio.file.Path;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/**
 * {@code controlplane/deploy/} against a real API server: the RBAC it grants is enough for every controller
 * (run as that ServiceAccount, with leader election and v1.17 auto-create so every verb is used), and the
 * Deployment passes server-side validation.
 */
@RequiresKubeApiServer
class DeployManifestsIT {

    static final Path DEPLOY = Path.of("deploy");
    static final String NS = "satoken-controlplane";

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
        V1Deployment deployment = (V1Deployment) Yaml.loadAll(DEPLOY.resolve("30-deployment.yaml").toFile()).get(0);

        V1Deployment dryRun = new AppsV1Api(server.adminClient()).createNamespacedDeployment(NS, deployment)
                .dryRun("All").execute();

        assertThat(dryRun.getSpec().getReplicas()).isEqualTo(2);
        assertThat(dryRun.getSpec().getTemplate().getSpec().getContainers().get(0).getArgs())
                .contains("--leader-elect=true", "--service-account-private-key-file=/etc/satoken/signing-key/sa.key");
    }
}
