package io.satoken.common.cli;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class CleanExitTest {

    @Test
    void cancel_beforeShutdown_removesTheHook_soAFailedStartKeepsItsOwnStatus() {
        Thread hook = CleanExit.onSigterm(() -> {
            throw new AssertionError("the hook of a cancelled clean exit ran");
        });

        assertThat(CleanExit.cancel(hook)).isTrue();
        assertThat(Runtime.getRuntime().removeShutdownHook(hook)).as("still registered").isFalse();
    }
}
