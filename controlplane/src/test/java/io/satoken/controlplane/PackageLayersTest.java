package io.satoken.controlplane;

import static org.assertj.core.api.Assertions.assertThat;

import io.satoken.common.testing.PackageGraph;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * The control plane's packages form layers (docs/architecture.md): no package imports one that imports it back, and
 * the admission webhook depends on no controller. From the bottom: {@code admission.view} (the JSON views of the
 * objects under review), {@code kube} (shared informers, API errors), {@code https} (the HTTPS server, which knows
 * nothing of admission), {@code admission} (the rules), {@code webhook} (the AdmissionReview endpoint that serves
 * them on {@code https}); the controllers sit on {@code controller} and {@code kube}; {@code runtime} and
 * {@code cli} on top.
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
        assertThat(graph.packages()).contains(BASE + ".admission", BASE + ".admission.view", BASE + ".https",
                BASE + ".webhook", BASE + ".kube", BASE + ".controller");
        assertThat(graph.cycles()).as("packages that import one another").isEmpty();
    }

    @Test
    void theWebhookAndItsRules_importNoController_norWhatStartsThem() {
        for (String pkg : List.of("admission", "admission.view", "https", "webhook", "kube")) {
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

    @Test
    void theServerImportsNoAdmission_norAnythingElseOfTheControlPlane() throws IOException {
        assertThat(graph.importsOf(BASE + ".https")).as("imports of https")
                .noneMatch(i -> i.to().equals(BASE + ".admission") || i.to().startsWith(BASE + ".admission."))
                .isEmpty();
        // nor by a qualified name in the code: the endpoint alone knows the review's format and its verdicts
        try (Stream<Path> files = Files.list(Path.of("src/main/java/io/satoken/controlplane/https"))) {
            for (Path file : files.toList()) {
                assertThat(Files.readString(file)).as("%s", file)
                        .doesNotContain(BASE + ".admission", "AdmissionReviews", "Verdict");
            }
        }
    }

    @Test
    void theEndpointSitsOnTheServer_andTheServerNotOnIt() {
        assertThat(graph.importsOf(BASE + ".webhook")).as("imports of webhook")
                .anyMatch(i -> i.to().equals(BASE + ".https"));
        assertThat(graph.importsOf(BASE + ".https")).as("imports of https")
                .noneMatch(i -> i.to().equals(BASE + ".webhook"));
    }
}
