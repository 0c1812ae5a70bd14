package io.satoken.controlplane.runtime;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

/**
 * {@code --controllers} as kube-controller-manager reads it: {@code *} (the controllers on by default), names,
 * {@code -name}; {@code tokens}, the one that needs the signing key, only when named.
 */
class ControllerSelectionTest {

    @Test
    void star_enablesEveryControllerOnByDefault_inStartOrder_butNotTokens() {
        assertThat(ControllerSelection.parse("*")).containsExactly("serviceaccounts", "root-ca", "aggregation");
    }

    @Test
    void tokens_runsOnlyWhenNamed() {
        assertThat(ControllerSelection.parse("*,tokens")).containsExactly("tokens", "serviceaccounts", "root-ca",
                "aggregation");
        assertThat(ControllerSelection.parse("tokens")).containsExactly("tokens");
    }

    @Test
    void minusName_disablesOneEvenWithStarOrItsName() {
        assertThat(ControllerSelection.parse("-root-ca,*")).containsExactly("serviceaccounts", "aggregation");
        assertThat(ControllerSelection.parse("tokens,-tokens,*")).containsExactly("serviceaccounts", "root-ca",
                "aggregation");
    }

    @Test
    void names_enableOnlyThose() {
        assertThat(ControllerSelection.parse("root-ca, serviceaccounts")).containsExactly("serviceaccounts", "root-ca");
    }

    @Test
    void minusStar_disablesEverything() {
        assertThat(ControllerSelection.parse("-*")).isEmpty();
        assertThat(ControllerSelection.parse("-*,tokens")).isEmpty();
    }

    @Test
    void unknownName_isAnErrorNamingIt() {
        assertThatThrownBy(() -> ControllerSelection.parse("tokens,-nope"))
                .hasMessageStartingWith("--controllers: unknown controller \"-nope\"");
    }
}
