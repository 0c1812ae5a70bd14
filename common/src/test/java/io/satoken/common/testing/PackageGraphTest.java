package io.satoken.common.testing;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class PackageGraphTest {

    @TempDir
    Path sources;

    @Test
    void packagesThatImportEachOtherThroughAThird_areOneCycle_andALayeringHasNone() throws IOException {
        source("p/a/A.java", "package p.a;\n\nimport p.b.B;\nimport java.util.List;\n");
        source("p/b/B.java", "package p.b;\n\nimport static p.c.C.helper;\n");
        source("p/c/C.java", "package p.c;\n\nimport p.a.A.Nested;\n");
        source("p/d/D.java", "package p.d;\n\nimport p.a.*;\nimport q.Outside;\n");

        PackageGraph graph = PackageGraph.read(sources, "p");

        assertThat(graph.cycles()).containsExactly(Set.of("p.a", "p.b", "p.c"));
        assertThat(graph.importsOf("p.d")).containsExactly(new PackageGraph.Import(Path.of("p/d/D.java"), "p.a"));
        assertThat(graph.importCount()).isEqualTo(4);

        source("p/c/C.java", "package p.c;\n");
        assertThat(PackageGraph.read(sources, "p").cycles()).isEmpty();
    }

    @Test
    void importsThatDoNotGoDown_areAnUpwardOne_oneWithinALayer_andAnyFromOrToAPackageOfNoLayer() throws IOException {
        source("p/low/L.java", "package p.low;\n\nimport p.high.H;\n");
        source("p/high/H.java", "package p.high;\n\nimport p.low.L;\nimport p.side.S;\n");
        source("p/side/S.java", "package p.side;\n\nimport p.high.H;\n");
        source("p/top/T.java", "package p.top;\n\nimport p.low.L;\nimport p.high.H;\n");
        List<List<String>> layers = List.of(List.of("low"), List.of("high", "side"), List.of("top"));

        PackageGraph graph = PackageGraph.read(sources, "p");

        assertThat(graph.notDownward("p", layers)).extracting(PackageGraph.Import::to)
                .containsExactlyInAnyOrder("p.high", "p.side", "p.high");
        assertThat(graph.unlayered("p", List.of(List.of("low", "high", "side")))).containsExactly("p.top");
    }

    @Test
    void aSourceRootWithoutJavaFiles_isAnError_notAnEmptyGraph() {
        assertThatThrownBy(() -> PackageGraph.read(sources, "p")).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("no Java sources");
    }

    private void source(String path, String text) throws IOException {
        Path file = sources.resolve(path);
        Files.createDirectories(file.getParent());
        Files.writeString(file, text);
    }
}
