package io.satoken.common.testing;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Map;
import org.junit.jupiter.api.Test;

class ProcStatsTest {

    @Test
    void busiestThreads_mostFirst_atMostMost() {
        Map<String, Double> before = Map.of("main", 1.00, "GC Thread#", 0.10);
        Map<String, Double> after = Map.of("main", 1.50, "GC Thread#", 0.30, "C# CompilerThre", 0.90);

        assertThat(ProcStats.busiestThreads(before, after, 2)).isEqualTo("C# CompilerThre 0.90, main 0.50");
    }

    @Test
    void busiestThreads_oneTickIsKept_lessIsNot() {
        // 0.03 - 0.02 is 0.009999999999999998 in doubles: still one clock tick
        Map<String, Double> before = Map.of("ticked", 0.02, "idle", 0.40);
        Map<String, Double> after = Map.of("ticked", 0.03, "idle", 0.40);

        assertThat(ProcStats.busiestThreads(before, after, 8)).isEqualTo("ticked 0.01");
        assertThat(ProcStats.busiestThreads(after, after, 8)).isEmpty();
    }

    @Test
    void statusMiB_thisProcess_namesEachField() throws Exception {
        String split = ProcStats.statusMiB(ProcessHandle.current().pid(), "RssAnon", "RssFile");

        assertThat(split).matches("RssAnon \\d+\\.\\d MiB, RssFile \\d+\\.\\d MiB");
    }

    @Test
    void threads_thisProcess_atLeastThisOne() throws Exception {
        assertThat(ProcStats.threads(ProcessHandle.current().pid())).isPositive();
    }
}
