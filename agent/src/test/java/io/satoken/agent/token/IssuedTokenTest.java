package io.satoken.agent.token;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Instant;
import org.junit.jupiter.api.Test;

class IssuedTokenTest {

    private static final Instant START = Instant.parse("2026-01-01T00:00:00Z");

    @Test
    void expiryBeforeIssue_isRejectedWithTheFieldNamed() {
        assertThatThrownBy(() -> new IssuedToken("t", START, START.minusSeconds(1)))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("expiresAt: must be after issuedAt");
        assertThatThrownBy(() -> new IssuedToken("t", START, START))
                .isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void responseWithoutIatOrTtl_isRejected() {
        // TM-8 has "ttl null → never refreshed"; we need an issue time, so such a response is an error.
        assertThatThrownBy(() -> IssuedToken.fromResponse("opaque", START, null))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("spec.expirationSeconds")
                .hasMessageNotContaining("opaque");
    }

    @Test
    void responseWithoutJwtIat_usesExpiryMinusRequestedSeconds() {
        IssuedToken t = IssuedToken.fromResponse("opaque", START.plusSeconds(3600), 3600L);
        assertThat(t.issuedAt()).isEqualTo(START);
    }
}
