package io.satoken.agent.reload;

import java.util.Arrays;
import java.util.Locale;
import java.util.Optional;
import java.util.stream.Collectors;

/**
 * The signals a volume may ask the agent to send: the ones applications conventionally take as "reload" or "shut
 * down cleanly". Never SIGKILL or SIGSTOP, which no process can handle. The numbers are Linux's on x86-64 and
 * arm64 (the generic table).
 */
public enum ReloadSignal {
    SIGHUP(1), SIGINT(2), SIGQUIT(3), SIGUSR1(10), SIGUSR2(12), SIGTERM(15), SIGWINCH(28);

    private final int number;

    ReloadSignal(int number) {
        this.number = number;
    }

    public int number() {
        return number;
    }

    /** {@code SIGHUP} or {@code HUP}, upper case as kill(1) and the Kubernetes API write them. */
    public static Optional<ReloadSignal> of(String name) {
        String full = name.startsWith("SIG") ? name : "SIG" + name;
        return Arrays.stream(values()).filter(s -> s.name().equals(full)).findFirst();
    }

    /** The names accepted, for an error message. */
    public static String names() {
        return Arrays.stream(values()).map(Enum::name).collect(Collectors.joining(", "));
    }

    @Override
    public String toString() {
        return name().toUpperCase(Locale.ROOT);
    }
}
