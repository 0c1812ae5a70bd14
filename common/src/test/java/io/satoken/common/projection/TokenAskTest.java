package io.satoken.common.projection;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/** The one rule for a file without an audience (PV-3, PV-8, PV-14), and the one match of a token against a file. */
class TokenAskTest {

    private static final Optional<List<String>> SERVER_OWN = Optional.of(List.of("https://kubernetes.default.svc"));

    @Test
    void aFileWithoutAnAudience_orWithAnEmptyOne_asksForTheServersOwn() {
        assertThat(TokenAsk.audiences(null)).isNull();
        assertThat(TokenAsk.audiences("")).isNull();
        assertThat(TokenAsk.audiences("vault")).containsExactly("vault");
        assertThat(ProjectionSpec.of("t").ask()).isEqualTo(new TokenAsk(null, 3600));
        assertThat(new ProjectionSpec("t", "", 600, null, null, null).ask().serverOwnAudiences()).isTrue();
    }

    @Test
    void theKubeletNamesTheServersOwnAudiencesWithTheEmptyString() {
        assertThat(new TokenAsk(null, 600).kubeletAudience()).isEqualTo("");
        assertThat(new TokenAsk(List.of("vault"), 600).kubeletAudience()).isEqualTo("vault");
    }

    @Test
    void aTokenMatches_whenItCarriesTheAskedAudiences_inOrder() {
        TokenAsk vault = new TokenAsk(List.of("vault"), 3600);

        assertThat(vault.audienceMismatch(List.of("vault"), Optional.empty())).isNull();
        assertThat(vault.audienceMismatch(List.of("vault", "other"), SERVER_OWN))
                .isEqualTo("audiences are [vault, other], not [vault]");
        assertThat(vault.matches(List.of("vault"), 3600, Optional.empty())).isTrue();
        assertThat(vault.matches(List.of("vault"), 7200, Optional.empty())).isFalse();
    }

    @Test
    void anAskForTheServersOwn_matchesOnlyTheServersOwn_andNothingWhenTheyAreNotKnown() {
        TokenAsk own = new TokenAsk(null, 3600);

        assertThat(own.audienceMismatch(SERVER_OWN.get(), SERVER_OWN)).isNull();
        assertThat(own.audienceMismatch(List.of("vault"), SERVER_OWN))
                .isEqualTo("audiences are [vault], not [https://kubernetes.default.svc] (the API server's own)");
        assertThat(own.audienceMismatch(List.of(), SERVER_OWN)).isNotNull();
        assertThat(own.audienceMismatch(SERVER_OWN.get(), Optional.empty()))
                .isEqualTo("requested without audiences, and the API server's own audiences are not known");
    }
}
