package io.satoken.common.projection;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

class ProjectionSpecTest {

    @Test
    void of_fillsTheDefaults() {
        // PV-2: 3600 s; no audience (PV-3); mode and owner left to PodProjections
        assertThat(ProjectionSpec.of("t")).isEqualTo(new ProjectionSpec("t", null, 3600, null, null, null));
    }

    @Test
    void emptyAudience_isNone() {
        assertThat(new ProjectionSpec("t", "", 3600, null, null, null).audience()).isNull();
    }

    @Test
    void modeOutOfRange_rejected() {
        // PV-11
        assertThatThrownBy(() -> new ProjectionSpec("t", null, 3600, 01000, null, null))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("mode: must be between 0 and 0777, got 01000");
    }

    @Test
    void pathRequired() {
        assertThatThrownBy(() -> new ProjectionSpec(null, null, 3600, null, null, null))
                .isInstanceOf(NullPointerException.class);
    }
}
