package io.satoken.agent;

import static org.assertj.core.api.Assertions.assertThat;

import io.satoken.common.testing.PackageGraph;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The agent's packages form layers (docs/architecture.md): no package imports one that imports it back, and every
 * import goes to a lower layer. From the bottom: {@code token} and {@code write} (tokens and how they are written,
 * importing no other package of the agent); {@code projection} (token files as values); {@code config} and
 * {@code refresh} (the static config file; the timers that keep each token fresh); {@code reads}, {@code reload} and
 * {@code metrics} (observers of the refresh); {@code pods} (Warning Events, an observer of the refresh and the reads); {@code csi}, {@code statics} and
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
        assertThat(graph.unlayered(BASE, LAYERS)).as("packages missing from LAYERS").isEmpty();
    }

    @Test
    void everyImportGoesToALowerLayer() {
        // the CSI messages are generated into csi.wire at build time, under the csi package they serve
        assertThat(graph.notDownward(BASE, LAYERS)).as("imports that do not go to a lower layer")
                .filteredOn(i -> !i.to().equals(BASE + ".csi.wire")).isEmpty();
    }

    @Test
    void theRefreshCallsNoSourceOfDirectories() {
        // a directory's first write goes back to its registrant as a future, not through a call into csi or statics
        assertThat(graph.importsOf(BASE + ".refresh")).as("imports of refresh")
                .noneMatch(i -> i.to().equals(BASE + ".csi") || i.to().equals(BASE + ".statics")
                        || i.to().equals(BASE + ".runtime"));
    }
}
