package io.satoken.controlplane.deploy;

import static io.satoken.common.testing.YamlTrees.list;
import static io.satoken.common.testing.YamlTrees.map;
import static org.assertj.core.api.Assertions.assertThat;

import io.kubernetes.client.openapi.models.V1Deployment;
import io.satoken.common.testing.YamlTrees;
import io.satoken.common.cli.BuildVersion;
import io.satoken.controlplane.runtime.ControllerSelection;
import io.satoken.controlplane.testing.DeployedManifests;
import java.io.IOException;
import java.io.Reader;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.yaml.snakeyaml.LoaderOptions;
import org.yaml.snakeyaml.Yaml;
import org.yaml.snakeyaml.constructor.SafeConstructor;

/**
 * {@code controlplane/deploy} as two kustomize bases: the Deployments (with their namespaces, RBAC, Service
 * and disruption budgets), and {@code webhooks/}, the fail-closed webhook registrations an operator applies
 * only once the webhook serves; and {@code legacy-tokens/}, the opt-in Component of the tokens controller and
 * the signing key. {@code DeployManifestsE2E} renders and dry-runs them with kubectl, {@code KustomizeRenderE2E}
 * renders them.
 */
class KustomizeBasesTest {

    private static final Path DEPLOY = Path.of("deploy");
    private static final Path LEGACY_TOKENS = DEPLOY.resolve(DeployedManifests.LEGACY_TOKENS);
    private static final String KUSTOMIZATION = "kustomization.yaml";
    private static final String KEY_FILE_FLAG = "--service-account-private-key-file=";

    @Test
    void deploymentsBase_listsEveryTopLevelManifest_andNoWebhookRegistration() throws IOException {
        Map<String, Object> kustomization = load(DEPLOY.resolve(KUSTOMIZATION));

        assertThat(list(kustomization, "resources")).containsExactlyElementsOf(withAgentIdentity(manifestNames(DEPLOY),
                "../../agent/deploy/identity"));
        assertThat(kustomization).containsOnlyKeys("apiVersion", "kind", "resources", "components", "patches");
        assertDropsTheAgentsServiceAccount(kustomization);
        assertThat(kinds(DEPLOY)).doesNotContain("MutatingWebhookConfiguration", "ValidatingWebhookConfiguration");
    }

    @Test
    void webhooksBase_holdsBothRegistrations_andNothingElse() throws IOException {
        Path webhooks = DEPLOY.resolve("webhooks");
        Map<String, Object> kustomization = load(webhooks.resolve(KUSTOMIZATION));

        assertThat(list(kustomization, "resources")).containsExactlyElementsOf(withAgentIdentity(manifestNames(webhooks),
                "../../../agent/deploy/identity"));
        assertThat(list(kustomization, "components")).containsExactly("../../../deploy/agent-identity");
        assertDropsTheAgentsServiceAccount(kustomization);
        assertThat(kinds(webhooks)).containsExactly("MutatingWebhookConfiguration", "ValidatingWebhookConfiguration");
    }

    /** Not the 3607 s an API server extends to a year: a stolen copy of a replica's credential lasts an hour. */
    @Test
    void everyDeployment_identityIsAnExplicitTokenOf3600s_thatNoServerExtends() throws IOException {
        List<Map<String, Object>> deployments = objects(DEPLOY).stream()
                .filter(o -> "Deployment".equals(o.get("kind"))).toList();

        assertThat(deployments).hasSize(2).allSatisfy(deployment -> {
            Map<String, Object> pod = map(map(map(deployment.get("spec")).get("template")).get("spec"));
            assertThat(pod).containsEntry("automountServiceAccountToken", false);
            Map<String, Object> access = list(pod, "volumes").stream().map(v -> map(v))
                    .filter(v -> "api-access".equals(v.get("name"))).findFirst().orElseThrow();
            Object token = map(list(map(access.get("projected")), "sources").get(0)).get("serviceAccountToken");
            assertThat(map(token)).isEqualTo(Map.of("path", "token", "expirationSeconds", 3600));
        });
    }

    @Test
    void everyDeployment_hasADisruptionBudgetSelectingItsPods() throws IOException {
        List<Map<String, Object>> objects = objects(DEPLOY);
        List<Map<String, Object>> deployments = objects.stream().filter(o -> "Deployment".equals(o.get("kind"))).toList();
        List<Map<String, Object>> budgets = objects.stream().filter(o -> "PodDisruptionBudget".equals(o.get("kind"))).toList();

        assertThat(deployments).hasSize(2);
        for (Map<String, Object> deployment : deployments) {
            Object labels = map(map(map(map(deployment.get("spec")).get("template")).get("metadata")).get("labels"));
            Object namespace = map(deployment.get("metadata")).get("namespace");
            assertThat(budgets).as("a PodDisruptionBudget for %s", map(deployment.get("metadata")).get("name"))
                    .anySatisfy(b -> {
                        assertThat(map(b.get("metadata")).get("namespace")).isEqualTo(namespace);
                        Map<String, Object> matchLabels = map(map(map(b.get("spec")).get("selector")).get("matchLabels"));
                        assertThat(map(labels)).containsAllEntriesOf(matchLabels);
                    });
        }
    }

    @Test
    void image_isNamedShort_andTheSharedComponentGivesItsNameAndThisBuildsVersion() throws IOException {
        Map<String, Object> image = list(load(DEPLOY.resolve("../../deploy/images").resolve(KUSTOMIZATION)), "images")
                .stream().map(YamlTrees::map)
                .filter(i -> "satoken-controlplane".equals(i.get("name"))).findFirst().orElseThrow();

        assertThat(list(load(DEPLOY.resolve(KUSTOMIZATION)), "components")).containsExactly(
                "../../deploy/agent-identity", "../../deploy/images");
        for (Map<String, Object> o : objects(DEPLOY)) {
            if ("Deployment".equals(o.get("kind"))) {
                Map<String, Object> podSpec = map(map(map(o.get("spec")).get("template")).get("spec"));
                assertThat(map(list(podSpec, "containers").get(0)).get("image")).isEqualTo("satoken-controlplane");
            }
        }
        // mvn -Pimages package tags the image it builds with the project's version
        assertThat(image).containsEntry("newName", "ghcr.io/satoken/satoken-controlplane")
                .containsEntry("newTag", BuildVersion.current().version());
    }

    /**
     * The agent's ServiceAccount first, as the source of the Component deploy/agent-identity (the agent's identity
     * in one place), then the base's own files.
     */
    private static List<String> withAgentIdentity(List<String> names, String identity) {
        List<String> all = new java.util.ArrayList<>(List.of(identity));
        all.addAll(names);
        return all;
    }

    /** Only agent/deploy creates the agent's ServiceAccount: the control plane's bases read it and drop it. */
    private static void assertDropsTheAgentsServiceAccount(Map<String, Object> kustomization) {
        assertThat(list(kustomization, "patches")).singleElement().satisfies(p -> {
            assertThat(map(map(p).get("target"))).containsEntry("kind", "ServiceAccount")
                    .containsEntry("name", "satoken-agent");
            assertThat(String.valueOf(map(p).get("patch"))).contains("$patch: delete");
        });
    }

    /** The signing key off the controllers by default: the tokens controller, its only user, runs when named. */
    @Test
    void controllersDeployment_runsNoTokensController_andMountsNoKey() throws IOException {
        V1Deployment controllers = controllers();
        List<String> args = DeployedManifests.args(controllers);
        String selection = args.stream().filter(a -> a.startsWith("--controllers=")).findFirst().orElseThrow();

        assertThat(ControllerSelection.parse(selection.substring("--controllers=".length())))
                .containsExactly("serviceaccounts", "root-ca", "aggregation");
        assertThat(args).noneMatch(a -> a.startsWith(KEY_FILE_FLAG));
        assertThat(controllers.getSpec().getTemplate().getSpec().getVolumes()).allSatisfy(v -> {
            assertThat(v.getSecret()).as(v.getName()).isNull();
            assertThat(v.getHostPath()).as(v.getName()).isNull();
        });
    }

    /** No shipped manifest is a Secret, and only the opt-in Component grants Secrets to anyone. */
    @Test
    void noManifest_isASecret_andOnlyTheLegacyTokensComponent_grantsSecrets() throws IOException {
        List<Path> files;
        try (Stream<Path> all = Files.walk(DEPLOY)) {
            files = all.filter(f -> f.toString().endsWith(".yaml")).filter(f -> !f.endsWith(KUSTOMIZATION))
                    .filter(f -> !f.getFileName().toString().endsWith("-patch.yaml")).sorted().toList();
        }
        assertThat(files).isNotEmpty();
        for (Path file : files) {
            for (Map<String, Object> o : objectsOf(file)) {
                assertThat(o.get("kind")).as(file.toString()).isNotEqualTo("Secret");
                if (!"ClusterRole".equals(o.get("kind")) && !"Role".equals(o.get("kind"))) {
                    continue;
                }
                boolean grantsSecrets = list(o, "rules").stream().map(YamlTrees::map)
                        .anyMatch(r -> list(r, "resources").contains("secrets"));
                assertThat(grantsSecrets).as("%s: %s", file, map(o.get("metadata")).get("name"))
                        .isEqualTo(file.startsWith(LEGACY_TOKENS));
            }
        }
    }

    /**
     * The opt-in Component: names the tokens controller and hands it the control-plane node's own key file,
     * read-only, one file (not kubeadm's whole pki directory), on pods that stay on control-plane nodes.
     */
    @Test
    @SuppressWarnings("unchecked")
    void legacyTokensComponent_namesTheController_andMountsOnlyTheNodesKeyFile_readOnly() throws IOException {
        Map<String, Object> kustomization = load(LEGACY_TOKENS.resolve(KUSTOMIZATION));
        V1Deployment controllers = controllers();
        List<String> args = DeployedManifests.withLegacyTokens(DEPLOY, controllers);
        String selection = args.stream().filter(a -> a.startsWith("--controllers=")).findFirst().orElseThrow();
        String keyFile = args.stream().filter(a -> a.startsWith(KEY_FILE_FLAG)).findFirst().orElseThrow()
                .substring(KEY_FILE_FLAG.length());
        List<Map<String, Object>> ops = new ArrayList<>();
        try (Reader reader = Files.newBufferedReader(LEGACY_TOKENS.resolve("deployment-patch.yaml"))) {
            ((List<Object>) yaml().load(reader)).forEach(o -> ops.add(map(o)));
        }
        Map<String, Object> volume = value(ops, "/spec/template/spec/volumes/-");
        Map<String, Object> mount = value(ops, "/spec/template/spec/containers/0/volumeMounts/-");
        Object runAsUser = value(ops, "/spec/template/spec/containers/0/securityContext/runAsUser");

        assertThat(kustomization).containsEntry("kind", "Component");
        assertThat(list(kustomization, "resources")).containsExactly("rbac.yaml");
        assertThat(ControllerSelection.parse(selection.substring("--controllers=".length())))
                .containsExactly("tokens", "serviceaccounts", "root-ca", "aggregation");
        assertThat(volume).isEqualTo(Map.of("name", "signing-key",
                "hostPath", Map.of("path", "/etc/kubernetes/pki/sa.key", "type", "File")));
        assertThat(mount).isEqualTo(Map.of("name", "signing-key", "mountPath", keyFile, "readOnly", true));
        // root only to read root's 0600 file: every capability stays dropped, no escalation, read-only root
        var sc = controllers.getSpec().getTemplate().getSpec().getContainers().get(0).getSecurityContext();
        assertThat(sc.getAllowPrivilegeEscalation()).isFalse();
        assertThat(sc.getReadOnlyRootFilesystem()).isTrue();
        assertThat(sc.getCapabilities().getDrop()).containsExactly("ALL");
        assertThat(sc.getCapabilities().getAdd()).isNullOrEmpty();
        assertThat(runAsUser).isEqualTo(0);
        // Linux control-plane nodes (ImageRecordsE2E checks the architectures against the images')
        assertThat(controllers.getSpec().getTemplate().getSpec().getNodeSelector()).containsOnly(
                Map.entry("node-role.kubernetes.io/control-plane", ""), Map.entry("kubernetes.io/os", "linux"));
    }

    private static V1Deployment controllers() throws IOException {
        return DeployedManifests.deployments(DEPLOY).stream()
                .filter(d -> Objects.equals(d.getMetadata().getName(), "satoken-controlplane")).findFirst().orElseThrow();
    }

    @SuppressWarnings("unchecked")
    private static <T> T value(List<Map<String, Object>> ops, String path) {
        List<Map<String, Object>> found = ops.stream().filter(o -> path.equals(o.get("path"))).toList();
        assertThat(found).as(path).hasSize(1);
        return (T) found.get(0).get("value");
    }

    private static List<Map<String, Object>> objectsOf(Path file) throws IOException {
        List<Map<String, Object>> found = new ArrayList<>();
        try (Reader reader = Files.newBufferedReader(file)) {
            for (Object o : yaml().loadAll(reader)) {
                if (o != null) {
                    found.add(map(o));
                }
            }
        }
        return found;
    }

    @Test
    void webhookDeployment_requiresTheApiServersClientCertificate_byDefault() throws IOException {
        Map<String, Object> podSpec = webhookPodSpec(objects(DEPLOY));
        Map<String, Object> container = map(list(podSpec, "containers").get(0));

        assertThat(list(container, "args")).contains("--client-ca-file=/etc/satoken/client-ca/ca.crt");
        assertThat(list(container, "volumeMounts")).map(YamlTrees::map)
                .anySatisfy(m -> assertThat(m).containsEntry("name", "client-ca")
                        .containsEntry("mountPath", "/etc/satoken/client-ca").containsEntry("readOnly", true));
        Map<String, Object> volume = list(podSpec, "volumes").stream().map(YamlTrees::map)
                .filter(v -> "client-ca".equals(v.get("name"))).findFirst().orElseThrow();
        assertThat(map(volume.get("configMap"))).containsEntry("name", "satoken-webhook-client-ca");
        assertThat(list(map(volume.get("configMap")), "items")).containsExactly(Map.of("key", "ca.crt", "path", "ca.crt"));
    }

    /** The opt-out Component tests, then removes, exactly what the base adds for client certificates. */
    @Test
    void withoutClientCertificates_component_removesTheFlagTheMountAndTheVolume_checkingEachFirst() throws IOException {
        Path component = DEPLOY.resolve("without-client-certificates");
        Map<String, Object> kustomization = load(component.resolve(KUSTOMIZATION));
        List<Object> operations = list(Map.of("ops", loadAny(component.resolve("deployment-patch.yaml"))), "ops");
        Map<String, Object> webhook = objects(DEPLOY).stream()
                .filter(o -> "Deployment".equals(o.get("kind")) && "satoken-webhook".equals(map(o.get("metadata")).get("name")))
                .findFirst().orElseThrow();

        assertThat(kustomization).containsEntry("kind", "Component");
        assertThat(map(map(list(kustomization, "patches").get(0)).get("target"))).containsEntry("name", "satoken-webhook");
        List<String> removed = new ArrayList<>();
        for (int i = 0; i < operations.size(); i += 2) {
            Map<String, Object> test = map(operations.get(i));
            Map<String, Object> remove = map(operations.get(i + 1));
            assertThat(test).containsEntry("op", "test");
            assertThat(remove).containsEntry("op", "remove");
            String path = (String) test.get("path");
            assertThat(at(webhook, path)).as("the base at %s", path).isEqualTo(test.get("value"));
            assertThat(path).startsWith((String) remove.get("path"));
            removed.add(String.valueOf(test.get("value")));
        }
        assertThat(removed).containsExactly("--client-ca-file=/etc/satoken/client-ca/ca.crt", "client-ca", "client-ca");
    }

    @Test
    void networkPolicy_letsOnlyItsIpBlockReachTheWebhookPort_andAnyoneTheMetricsPort() throws IOException {
        List<Map<String, Object>> objects = objects(DEPLOY);
        Map<String, Object> policy = objects.stream().filter(o -> "NetworkPolicy".equals(o.get("kind")))
                .findFirst().orElseThrow();
        Map<String, Object> spec = map(policy.get("spec"));
        Map<String, Object> podSpec = webhookPodSpec(objects);
        List<Object> portNames = list(map(list(podSpec, "containers").get(0)), "ports").stream()
                .map(p -> map(p).get("name")).toList();

        assertThat(map(policy.get("metadata"))).containsEntry("namespace", "satoken-webhook");
        assertThat(map(map(spec.get("podSelector")).get("matchLabels")))
                .isEqualTo(Map.of("app.kubernetes.io/name", "satoken-webhook"));
        assertThat(list(spec, "policyTypes")).containsExactly("Ingress");
        List<Map<String, Object>> rules = list(spec, "ingress").stream().map(YamlTrees::map).toList();
        assertThat(rules).hasSize(2);
        assertThat(list(rules.get(0), "ports")).containsExactly(Map.of("protocol", "TCP", "port", "webhook"));
        assertThat(list(rules.get(0), "from")).containsExactly(Map.of("ipBlock", Map.of("cidr", "192.0.2.0/24")));
        assertThat(list(rules.get(1), "ports")).containsExactly(Map.of("protocol", "TCP", "port", "metrics"));
        assertThat(rules.get(1)).doesNotContainKey("from");
        assertThat(portNames).contains("webhook", "metrics");
    }

    private static Map<String, Object> webhookPodSpec(List<Map<String, Object>> objects) {
        Map<String, Object> webhook = objects.stream()
                .filter(o -> "Deployment".equals(o.get("kind")) && "satoken-webhook".equals(map(o.get("metadata")).get("name")))
                .findFirst().orElseThrow();
        return map(map(map(webhook.get("spec")).get("template")).get("spec"));
    }

    /** The value at a JSON pointer such as {@code /spec/template/spec/volumes/1/name}. */
    private static Object at(Object tree, String pointer) {
        Object node = tree;
        for (String part : pointer.substring(1).split("/")) {
            node = node instanceof List<?> items ? items.get(Integer.parseInt(part)) : map(node).get(part);
        }
        return node;
    }

    private static Object loadAny(Path file) throws IOException {
        try (Reader reader = Files.newBufferedReader(file)) {
            return yaml().load(reader);
        }
    }

    private static List<String> manifestNames(Path dir) throws IOException {
        try (Stream<Path> files = Files.list(dir)) {
            return files.map(f -> f.getFileName().toString())
                    .filter(n -> n.endsWith(".yaml") && !n.equals(KUSTOMIZATION)).sorted().toList();
        }
    }

    private static List<Map<String, Object>> objects(Path dir) throws IOException {
        List<Map<String, Object>> found = new ArrayList<>();
        for (String name : manifestNames(dir)) {
            try (Reader reader = Files.newBufferedReader(dir.resolve(name))) {
                for (Object o : yaml().loadAll(reader)) {
                    if (o != null) {
                        found.add(map(o));
                    }
                }
            }
        }
        return found;
    }

    private static List<Object> kinds(Path dir) throws IOException {
        return objects(dir).stream().map(o -> o.get("kind")).toList();
    }

    private static Map<String, Object> load(Path file) throws IOException {
        try (Reader reader = Files.newBufferedReader(file)) {
            return map(yaml().load(reader));
        }
    }

    private static Yaml yaml() {
        return new Yaml(new SafeConstructor(new LoaderOptions()));
    }

}
