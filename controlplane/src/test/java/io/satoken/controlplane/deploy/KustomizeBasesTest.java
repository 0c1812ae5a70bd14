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
