package io.satoken.controlplane.injection;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.time.Instant;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;

/** The per-namespace eviction budget on a clock moved by hand. */
class EvictionBudgetTest {

    private Instant now = Instant.parse("2026-01-01T00:00:00Z");
    private final EvictionBudget budget = new EvictionBudget(() -> now, Duration.ofSeconds(2), 3);

    @Test
    void eachNamespace_hasItsOwnBurst_refilledOneEveryInterval() {
        assertThat(IntStream.range(0, 4).mapToObj(i -> budget.tryTake("shop"))).containsExactly(true, true, true,
                false);
        assertThat(budget.tryTake("bank")).isTrue();
        now = now.plusSeconds(1);
        assertThat(budget.tryTake("shop")).isFalse();
        now = now.plusSeconds(1);
        assertThat(budget.tryTake("shop")).isTrue();
        assertThat(budget.tryTake("shop")).isFalse();
    }

    @Test
    void aNamespacesBucket_isDroppedOnceFullAgain_soMemoryHoldsOnlyRecentEvictions() {
        for (int i = 0; i < 1000; i++) {
            budget.tryTake("ns-" + i);
        }
        assertThat(budget.namespacesHeld()).isEqualTo(1000);
        now = now.plusSeconds(1);
        assertThat(budget.namespacesHeld()).isEqualTo(1000);
        now = now.plusSeconds(1);
        assertThat(budget.namespacesHeld()).isZero();
        // and a dropped namespace starts again with its whole burst
        assertThat(IntStream.range(0, 4).mapToObj(i -> budget.tryTake("ns-0"))).containsExactly(true, true, true,
                false);
    }

    @Test
    void theSweep_keepsANamespaceThatIsNotFullYet() {
        budget.tryTake("shop");
        budget.tryTake("shop");
        now = now.plusSeconds(2);
        assertThat(budget.namespacesHeld()).isEqualTo(1);
        now = now.plusSeconds(2);
        assertThat(budget.namespacesHeld()).isZero();
    }
}
