package io.satoken.common.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;

/** Every error a command finds before it starts, collected and then thrown together. */
class UsageErrorsTest {

    @Test
    void attempt_returnsTheResultOfAGoodCheck() {
        List<String> errors = new ArrayList<>();

        assertThat(UsageErrors.attempt(errors, () -> 42)).isEqualTo(42);
        assertThat(errors).isEmpty();
    }

    @Test
    void attempt_addsTheMessageOfABadCheckAndGoesOn() {
        List<String> errors = new ArrayList<>();

        Object first = UsageErrors.attempt(errors, () -> {
            throw new IllegalArgumentException("--a: bad");
        });
        Object second = UsageErrors.attempt(errors, () -> {
            throw new IllegalArgumentException("--b: bad");
        });

        assertThat(first).isNull();
        assertThat(second).isNull();
        assertThat(errors).containsExactly("--a: bad", "--b: bad");
    }

    @Test
    void attempt_letsOtherExceptionsThrough() {
        assertThatThrownBy(() -> UsageErrors.attempt(new ArrayList<>(), () -> {
            throw new IllegalStateException("a bug, not a bad flag");
        })).isInstanceOf(IllegalStateException.class);
    }

    @CommandLine.Command(name = "cmd")
    static final class Cmd {
    }

    @Test
    void throwIfAny_throwsEveryErrorInOrderOrNothing() {
        CommandLine command = new CommandLine(new Cmd());
        UsageErrors.throwIfAny(command, List.of());

        assertThatThrownBy(() -> UsageErrors.throwIfAny(command, List.of("one", "two")))
                .isInstanceOfSatisfying(UsageErrors.class, e -> assertThat(e.errors()).containsExactly("one", "two"));
    }
}
