package io.satoken.common.testing;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class OperationsMetricsTest {

    @TempDir
    Path dir;

    @Test
    void eachLabelOfARow_isOneContract_withItsValuesSorted_andNotesLeftOut() throws IOException {
        Path page = page("""
                ### Agent

                | metric | type | labels (values) | meaning |
                |---|---|---|---|
                | `x_total` | counter | `result` = `success`, `retryable` (5xx, 429), `refused` | calls, a \\| b |
                | `x_seconds` | histogram; buckets 1, 2 s | | latency |
                | `y` | gauge | `loop` = `b`, `a` (the selected ones); `result` = `done`, `retry` | loops |
                | `z` | gauge | `loop` (as above) | more |
                | `w_total` | counter | `code` (HTTP status, or `error`) | answers |

                ### Other

                | `not_this` | gauge | | |
                """);

        assertThat(OperationsMetrics.table(page, "### Agent")).containsExactly(
                new DocumentedMetric("x_total", "counter", "result", List.of("refused", "retryable", "success"),
                        false),
                new DocumentedMetric("x_seconds", "histogram", null, List.of(), false),
                new DocumentedMetric("y", "gauge", "loop", List.of("a", "b"), true),
                new DocumentedMetric("y", "gauge", "result", List.of("done", "retry"), false),
                new DocumentedMetric("z", "gauge", "loop", List.of("a", "b"), true),
                new DocumentedMetric("w_total", "counter", null, List.of(), false));
    }

    @Test
    void aLabelAsAboveWithNothingAbove_isAnError_thatNamesTheFamily() throws IOException {
        Path page = page("### Agent\n\n| `z` | gauge | `loop` (as above) | more |\n");

        assertThatThrownBy(() -> OperationsMetrics.table(page, "### Agent"))
                .hasMessageContaining("z: `loop` (as above), but no row above gives its values");
    }

    @Test
    void aMissingHeading_isAnError_notAnEmptyContract() throws IOException {
        Path page = page("### Control plane\n\n| `z` | gauge | | |\n");

        assertThatThrownBy(() -> OperationsMetrics.table(page, "### Agent")).hasMessageContaining("no heading");
    }

    private Path page(String text) throws IOException {
        return Files.writeString(dir.resolve("operations.md"), text);
    }
}
