package io.satoken.controlplane.admission;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

class BodyBudgetTest {

    @Test
    void tryReserve_upToTheLimit_fitsAndNotAByteMore() {
        BodyBudget budget = new BodyBudget(100);

        assertThat(budget.tryReserve(60)).isNotNull();
        assertThat(budget.tryReserve(41)).isNull();
        assertThat(budget.tryReserve(40)).isNotNull();
        assertThat(budget.held()).isEqualTo(100);
        assertThat(budget.tryReserve(0)).isNotNull(); // a request without a body always gets in
    }

    @Test
    void release_calledRepeatedly_givesTheBytesBackOnce() {
        BodyBudget budget = new BodyBudget(100);
        BodyBudget.Reservation first = budget.tryReserve(70);
        budget.tryReserve(30);

        first.release();
        first.release();

        assertThat(budget.held()).isEqualTo(30);
        assertThat(budget.tryReserve(71)).isNull();
        assertThat(budget.tryReserve(70)).isNotNull();
    }

    @Test
    void release_emptyClaim_changesNothing() {
        BodyBudget budget = new BodyBudget(10);
        budget.tryReserve(10);

        BodyBudget.Reservation.NONE.release();

        assertThat(budget.held()).isEqualTo(10);
    }

    @Test
    void budget_notPositive_rejected() {
        assertThatThrownBy(() -> new BodyBudget(0)).hasMessage("the body budget must be positive, got 0");
    }
}
