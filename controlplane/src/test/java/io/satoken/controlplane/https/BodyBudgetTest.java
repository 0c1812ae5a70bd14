package io.satoken.controlplane.https;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

class BodyBudgetTest {

    @Test
    void tryReserve_upToTheLimit_fitsAndNotAByteMore() {
        BodyBudget budget = new BodyBudget(100);

        assertThat(budget.tryReserve("a", 60)).isNotNull();
        assertThat(budget.tryReserve("a", 41)).isNull();
        assertThat(budget.tryReserve("a", 40)).isNotNull();
        assertThat(budget.held()).isEqualTo(100);
        assertThat(budget.tryReserve("a", 0)).isNotNull(); // a request without a body always gets in
    }

    @Test
    void release_calledRepeatedly_givesTheBytesBackOnce() {
        BodyBudget budget = new BodyBudget(100);
        BodyBudget.Reservation first = budget.tryReserve("a", 70);
        budget.tryReserve("a", 30);

        first.release();
        first.release();

        assertThat(budget.held()).isEqualTo(30);
        assertThat(budget.tryReserve("a", 71)).isNull();
        assertThat(budget.tryReserve("a", 70)).isNotNull();
    }

    @Test
    void release_emptyClaim_changesNothing() {
        BodyBudget budget = new BodyBudget(10);
        budget.tryReserve("a", 10);

        BodyBudget.Reservation.NONE.release();

        assertThat(budget.held()).isEqualTo(10);
    }

    @Test
    void tryReserve_oneClient_upToItsShare_othersStillFit() {
        BodyBudget budget = new BodyBudget(100, 30);

        assertThat(budget.tryReserve("attacker", 20)).isNotNull();
        assertThat(budget.tryReserve("attacker", 11)).isNull();
        assertThat(budget.refusal("attacker", 11)).isEqualTo(BodyBudget.Refusal.CLIENT_SHARE);
        assertThat(budget.tryReserve("apiserver", 30)).isNotNull();
        assertThat(budget.heldBy("attacker")).isEqualTo(20);
        assertThat(budget.held()).isEqualTo(50);
    }

    @Test
    void tryReserve_sharesLeftButBudgetFull_refusedForTheBudget() {
        BodyBudget budget = new BodyBudget(50, 30);
        budget.tryReserve("a", 30);
        budget.tryReserve("b", 20);

        assertThat(budget.refusal("c", 1)).isEqualTo(BodyBudget.Refusal.BUDGET);
        assertThat(budget.tryReserve("c", 1)).isNull();
    }

    @Test
    void grow_withinTheClientsShare_untilReleased() {
        BodyBudget budget = new BodyBudget(100, 30);
        BodyBudget.Reservation claim = budget.tryReserve("a", 10);

        assertThat(claim.grow(15)).isTrue();
        assertThat(claim.grow(6)).isFalse();
        assertThat(budget.heldBy("a")).isEqualTo(25);

        claim.release();

        assertThat(budget.held()).isZero();
        assertThat(budget.heldBy("a")).isZero();
        assertThat(claim.grow(1)).isFalse();
        assertThat(BodyBudget.Reservation.NONE.grow(1)).isFalse();
    }

    @Test
    void budget_notPositive_rejected() {
        assertThatThrownBy(() -> new BodyBudget(0)).hasMessage(
                "the body budget and each client's share must be positive, got 0 and 0");
    }
}
