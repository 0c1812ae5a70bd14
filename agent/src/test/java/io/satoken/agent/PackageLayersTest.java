package io.satoken.agent;

import static org.assertj.core.api.Assertions.assertThat;

import io.satoken.common.testing.PackageGraph;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;

/**
 * The agent's packages form layers (docs/architecture.md): no package imports one that imports it back, and every
 * import goes to a lower layer. From the bottom: {@code token} and {@code write} (tokens and how they are written,
 * importing no other package of the agent); {@code projection} (token files as values); {@code config} and
 * {@code refresh} (the static config file; the timers that keep each token fresh); {@code reads}, {@code reload} and
 * {@code metrics} (observers of the refresh); {@code pods} (Warning Events); {@code csi}, {@code statics} and
 * {@code status} (the two sources of directories, and the status endpoint); {@code runtime}; {@code cli}.
 */
class PackageLayersTest {

    private static final String BASE = "io.satoken.agent";
    /** The layers, from the bottom; a package may import only packages of lower layers. */
    private static final List<List<String>> LAYERS = List.of(
            List.of("token", "write"),
            List.of("projection"),
            List.of("config", "refresh"),
            List.of("reads", "reload", "metrics"),
            List.of("pods"),
            List.of("csi", "statics", "status"),
            List.of("runtime"),
            List.of("cli"));
    private static final Map<String, Integer> LAYER_OF = IntStream.range(0, LAYERS.size()).boxed()
            .flatMap(i -> LAYERS.get(i).stream().map(p -> Map.entry(BASE + "." + p, i)))
            .collect(Collectors.toMap(Map.Entry::getKey, Map.Entry::getValue));

    /** The main sources, from the module's directory, where Maven runs the tests. */
    private final PackageGraph graph = PackageGraph.read(Path.of("src/main/java"), BASE);

    @Test
    void noPackageCycle() {
        assertThat(graph.packages()).contains(BASE + ".token", BASE + ".projection", BASE + ".refresh",
                BASE + ".csi");
        assertThat(graph.cycles()).as("packages that import one another").isEmpty();
    }

    @Test
    void everyPackageHasALayer() {
        assertThat(graph.packages()).as("packages missing from LAYERS").allMatch(LAYER_OF::containsKey);
    }

    @Test
    void everyImportGoesToALowerLayer() {
        for (String pkg : graph.packages()) {
            int layer = LAYER_OF.get(pkg);
            // the CSI messages are generated into csi.wire at build time, under the csi package they serve
            assertThat(graph.importsOf(pkg)).as("imports of %s (layer %d)", pkg, layer)
                    .filteredOn(i -> !i.to().equals(BASE + ".csi.wire"))
                    .allMatch(i -> LAYER_OF.containsKey(i.to()) && LAYER_OF.get(i.to()) < layer);
        }
    }

    @Test
    void theRefreshCallsNoSourceOfDirectories() {
        // a directory's first write goes back to its registrant as a future, not through a call into csi or statics
        assertThat(graph.importsOf(BASE + ".refresh")).as("imports of refresh")
                .noneMatch(i -> i.to().equals(BASE + ".csi") || i.to().equals(BASE + ".statics")
                        || i.to().equals(BASE + ".runtime"));
    }
}
