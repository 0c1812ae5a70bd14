package io.satoken.agent.token;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.satoken.agent.testing.FakeClock;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The kubelet's latest tokens, served by pod and audience ({@code tokenSource: kubelet}). */
class DeliveredTokensTest {

    private static final Instant START = Instant.parse("2026-01-01T00:00:00Z");
    private static final String UID = "0b7e6f0a-1111";
    private static final TokenKey VAULT = new TokenKey("shop", "app", List.of("vault"), 600,
            BoundObjectRef.pod("web-0", UID));
    private static final TokenKey SERVERS_OWN = new TokenKey("shop", "app", null, 3600,
            BoundObjectRef.pod("web-0", UID));

    private final FakeClock clock = new FakeClock(START);
    private final DeliveredTokens tokens = new DeliveredTokens(clock);

    private static IssuedToken token(String text, Duration after) {
        return new IssuedToken(text, START.plus(after), START.plus(after).plusSeconds(600));
    }

    @Test
    void issue_servesTheLatestDeliveryForTheKeysPodAndAudience_whateverItsLifetime() throws Exception {
        tokens.deliver(UID, Map.of("vault", token("a", Duration.ZERO), "", token("b", Duration.ZERO)));
        tokens.deliver("another-pod", Map.of("vault", token("c", Duration.ZERO)));

        assertThat(tokens.issue(VAULT).token()).isEqualTo("a");
        assertThat(tokens.issue(SERVERS_OWN).token()).as("a key without audiences is the audience \"\"")
                .isEqualTo("b");
    }

    @Test
    void deliver_tellsWhichTokensDifferFromTheOnesServed_soADeliveryMissedByAFetchIsNewAgain() throws Exception {
        assertThat(tokens.deliver(UID, Map.of("vault", token("a", Duration.ZERO)))).containsExactly("vault");
        tokens.issue(VAULT);
        assertThat(tokens.deliver(UID, Map.of("vault", token("a", Duration.ZERO)))).as("the same token").isEmpty();

        clock.advance(Duration.ofSeconds(480));
        assertThat(tokens.deliver(UID, Map.of("vault", token("b", Duration.ofSeconds(480))))).containsExactly("vault");
        // a fetch that read the old token before this delivery, or none yet: still new at the next republish
        assertThat(tokens.deliver(UID, Map.of("vault", token("b", Duration.ofSeconds(480))))).containsExactly("vault");
        assertThat(tokens.issue(VAULT).token()).isEqualTo("b");
        assertThat(tokens.deliver(UID, Map.of("vault", token("b", Duration.ofSeconds(480))))).isEmpty();
    }

    @Test
    void issue_beforeAnyDelivery_orAfterTheLatestExpired_isARetryableErrorNamingTheKubelet() {
        assertThatThrownBy(() -> tokens.issue(VAULT)).isInstanceOfSatisfying(TokenSourceException.class, e -> {
            assertThat(e.permanent()).isFalse();
            assertThat(e.getMessage()).contains("no token from the kubelet yet for audience \"vault\"");
        });

        tokens.deliver(UID, Map.of("vault", token("a", Duration.ZERO)));
        clock.advance(Duration.ofSeconds(600));
        assertThatThrownBy(() -> tokens.issue(VAULT)).isInstanceOfSatisfying(TokenSourceException.class, e -> {
            assertThat(e.permanent()).isFalse();
            assertThat(e.getMessage()).contains("expired at 2026-01-01T00:10:00Z").contains("is the kubelet running?")
                    .doesNotContain(" a ");
        });
    }

    @Test
    void issue_forAKeyNotBoundToAPod_isRefusedForGood() {
        TokenKey unbound = new TokenKey("shop", "app", List.of("vault"), 600, null);

        assertThatThrownBy(() -> tokens.issue(unbound)).isInstanceOfSatisfying(TokenSourceException.class,
                e -> assertThat(e.permanent()).isTrue());
    }
}
