package io.satoken.controlplane.deploy;

import static io.satoken.common.testing.YamlTrees.list;
import static io.satoken.common.testing.YamlTrees.map;
import static org.assertj.core.api.Assertions.assertThat;

import io.satoken.common.testing.YamlTrees;
import io.satoken.common.cli.BuildVersion;
import java.io.IOException;
import java.io.Reader;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.yaml.snakeyaml.LoaderOptions;
import org.yaml.snakeyaml.Yaml;
import org.yaml.snakeyaml.constructor.SafeConstructor;

/**
 * {@code controlplane/deploy} as two kustomize bases: the Deployments (with their namespaces, RBAC, Service
 * and disruption budgets), and {@code webhooks/}, the fail-closed webhook registrations an operator applies
 * only once the webhook serves. {@code DeployManifestsE2E} renders and dry-runs both with kubectl.
 */
class KustomizeBasesTest {

    private static final Path DEPLOY = Path.of("deploy");
    private static final String KUSTOMIZATION = "kustomization.yaml";

    @Test
    void deploymentsBase_listsEveryTopLevelManifest_andNoWebhookRegistration() throws IOException {
        Map<String, Object> kustomization = load(DEPLOY.resolve(KUSTOMIZATION));

        assertThat(list(kustomization, "resources")).containsExactlyElementsOf(manifestNames(DEPLOY));
        assertThat(kustomization).containsOnlyKeys("apiVersion", "kind", "resources", "components");
        assertThat(kinds(DEPLOY)).doesNotContain("MutatingWebhookConfiguration", "ValidatingWebhookConfiguration");
    }

    @Test
    void webhooksBase_holdsBothRegistrations_andNothingElse() throws IOException {
        Path webhooks = DEPLOY.resolve("webhooks");
        Map<String, Object> kustomization = load(webhooks.resolve(KUSTOMIZATION));

        assertThat(list(kustomization, "resources")).containsExactlyElementsOf(manifestNames(webhooks));
        assertThat(kinds(webhooks)).containsExactly("MutatingWebhookConfiguration", "ValidatingWebhookConfiguration");
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

        assertThat(list(load(DEPLOY.resolve(KUSTOMIZATION)), "components")).containsExactly("../../deploy/images");
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
