package io.satoken.agent.refresh;

import java.time.Duration;
import java.util.Locale;

/** Writes a duration as the README and the flags do ({@code 670ms}, {@code 4.2s}, {@code 1m0s}), not {@code PT0.67S}. */
final class DurationText {

    private DurationText() {
    }

    static String of(Duration d) {
        long ms = d.toMillis();
        if (ms < 1000) {
            return ms + "ms";
        }
        if (ms < 60_000) {
            return String.format(Locale.ROOT, "%.1fs", ms / 1000.0);
        }
        return d.toMinutes() + "m" + d.toSecondsPart() + "s";
    }
}
