package io.satoken.controlplane.admission;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

class BodyBudgetTest {

    @Test
    void claims_fit_up_to_the_limit_and_not_a_byte_more() {
        BodyBudget budget = new BodyBudget(100);

        assertThat(budget.tryReserve(60)).isNotNull();
        assertThat(budget.tryReserve(41)).isNull();
        assertThat(budget.tryReserve(40)).isNotNull();
        assertThat(budget.held()).isEqualTo(100);
        assertThat(budget.tryReserve(0)).isNotNull(); // a request without a body always gets in
    }

    @Test
    void release_gives_the_bytes_back_once_however_often_it_is_called() {
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
    void releasing_the_empty_claim_changes_nothing() {
        BodyBudget budget = new BodyBudget(10);
        budget.tryReserve(10);

        BodyBudget.Reservation.NONE.release();

        assertThat(budget.held()).isEqualTo(10);
    }

    @Test
    void budget_must_be_positive() {
        assertThatThrownBy(() -> new BodyBudget(0)).hasMessage("the body budget must be positive, got 0");
    }
}
