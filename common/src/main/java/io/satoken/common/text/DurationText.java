package io.satoken.common.text;

import java.time.Duration;
import java.util.Locale;

/**
 * Writes a duration as Kubernetes tools print one (Go's {@code time.Duration}), in the units the flags take:
 * {@code 670ms}, {@code 4.3s}, {@code 15s}, {@code 1m0s}, {@code 1h30m0s}; never ISO-8601's {@code PT0.67S}. Under a
 * minute, seconds keep one decimal, dropped when it is 0; from a minute on, whole seconds. What
 * common's {@code cli.DurationConverter} reads back, for the values it takes (whole units).
 */
public final class DurationText {

    private DurationText() {
    }

    public static String of(Duration d) {
        if (d.isNegative()) {
            return "-" + of(d.negated());
        }
        long ms = d.toMillis();
        if (ms == 0) {
            return "0s";
        }
        if (ms < 1000) {
            return ms + "ms";
        }
        if (ms < 60_000) {
            String s = String.format(Locale.ROOT, "%.1f", ms / 1000.0);
            return (s.endsWith(".0") ? s.substring(0, s.length() - 2) : s) + "s";
        }
        long seconds = d.getSeconds();
        String minutes = (seconds % 3600 / 60) + "m" + (seconds % 60) + "s";
        return seconds < 3600 ? minutes : (seconds / 3600) + "h" + minutes;
    }
}
