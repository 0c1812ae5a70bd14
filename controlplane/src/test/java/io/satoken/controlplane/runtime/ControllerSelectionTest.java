package io.satoken.controlplane.runtime;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

/** {@code --controllers} as kube-controller-manager reads it: {@code *}, names, {@code -name}. */
class ControllerSelectionTest {

    @Test
    void star_enablesAll_inStartOrder() {
        assertThat(ControllerSelection.parse("*")).containsExactly("tokens", "serviceaccounts", "root-ca", "aggregation");
    }

    @Test
    void minusName_disablesOneEvenWithStar() {
        assertThat(ControllerSelection.parse("-tokens,*")).containsExactly("serviceaccounts", "root-ca", "aggregation");
    }

    @Test
    void names_enableOnlyThose() {
        assertThat(ControllerSelection.parse("root-ca, serviceaccounts")).containsExactly("serviceaccounts", "root-ca");
    }

    @Test
    void minusStar_disablesEverything() {
        assertThat(ControllerSelection.parse("-*")).isEmpty();
    }

    @Test
    void unknownName_isAnErrorNamingIt() {
        assertThatThrownBy(() -> ControllerSelection.parse("tokens,-nope"))
                .hasMessageStartingWith("--controllers: unknown controller \"-nope\"");
    }
}
