package io.satoken.common;

import static org.assertj.core.api.Assertions.assertThat;

import io.satoken.common.testing.PackageGraph;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * Common's packages form layers, as the agent's and the control plane's do: no package imports one that imports it
 * back, and every import goes to a lower layer. From the bottom: {@code paths}, {@code text}, {@code logging} and
 * {@code metrics} (import nothing of common); {@code kube} and {@code projection} (the API client's plumbing; token
 * files as values); {@code health} (the probe and status servers); {@code cli} (the flags both programs share).
 */
class PackageLayersTest {

    private static final String BASE = "io.satoken.common";
    /** The layers, from the bottom; a package may import only packages of lower layers. */
    private static final List<List<String>> LAYERS = List.of(
            List.of("paths", "text", "logging", "metrics"),
            List.of("kube", "projection"),
            List.of("health"),
            List.of("cli"));

    /** The main sources, from the module's directory, where Maven runs the tests. */
    private final PackageGraph graph = PackageGraph.read(Path.of("src/main/java"), BASE);

    @Test
    void noPackageCycle() {
        assertThat(graph.packages()).contains(BASE + ".health", BASE + ".cli", BASE + ".text");
        assertThat(graph.cycles()).as("packages that import one another").isEmpty();
    }

    @Test
    void everyPackageHasALayer() {
        assertThat(graph.unlayered(BASE, LAYERS)).as("packages missing from LAYERS").isEmpty();
    }

    @Test
    void everyImportGoesToALowerLayer() {
        assertThat(graph.notDownward(BASE, LAYERS)).as("imports that do not go to a lower layer").isEmpty();
    }
}
