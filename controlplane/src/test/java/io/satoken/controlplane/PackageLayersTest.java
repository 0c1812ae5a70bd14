package io.satoken.controlplane;

import static org.assertj.core.api.Assertions.assertThat;

import io.satoken.common.testing.PackageGraph;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The control plane's packages form layers (docs/architecture.md): no package imports one that imports it back, and
 * the admission webhook depends on no controller. From the bottom: {@code admission.view} (the JSON views of the
 * objects under review), {@code kube} (shared informers, API errors), {@code admission} (the rules), {@code webhook}
 * (the HTTPS server that serves them); the controllers sit on {@code controller} and {@code kube};
 * {@code runtime} and {@code cli} on top.
 */
class PackageLayersTest {

    private static final String BASE = "io.satoken.controlplane";
    /** The controllers and what only they run on. */
    private static final List<String> CONTROLLERS = List.of("controller", "tokens", "serviceaccounts", "rootca",
            "aggregation");

    /** The main sources, from the module's directory, where Maven runs the tests. */
    private final PackageGraph graph = PackageGraph.read(Path.of("src/main/java"), BASE);

    @Test
    void noPackageCycle() {
        assertThat(graph.packages()).contains(BASE + ".admission", BASE + ".admission.view", BASE + ".webhook",
                BASE + ".kube", BASE + ".controller");
        assertThat(graph.cycles()).as("packages that import one another").isEmpty();
    }

    @Test
    void theWebhookAndItsRules_importNoController_norWhatStartsThem() {
        for (String pkg : List.of("admission", "admission.view", "webhook", "kube")) {
            assertThat(graph.importsOf(BASE + "." + pkg)).as("imports of %s", pkg)
                    .noneMatch(i -> CONTROLLERS.stream().anyMatch(c -> i.to().equals(BASE + "." + c)))
                    .noneMatch(i -> i.to().equals(BASE + ".runtime") || i.to().equals(BASE + ".cli"));
        }
    }

    @Test
    void theRulesImportNoServer_andTheViewsNothingElseOfTheControlPlane() {
        assertThat(graph.importsOf(BASE + ".admission")).as("imports of admission")
                .allMatch(i -> i.to().equals(BASE + ".admission.view") || i.to().equals(BASE + ".kube"));
        assertThat(graph.importsOf(BASE + ".admission.view")).as("imports of admission.view").isEmpty();
        assertThat(graph.importsOf(BASE + ".kube")).as("imports of kube").isEmpty();
    }
}
