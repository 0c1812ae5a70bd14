package io.satoken.agent.cli;

import java.time.Duration;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import picocli.CommandLine;

/**
 * Parses durations the way Kubernetes tools write them: {@code 30s}, {@code 5m}, {@code 1h30m},
 * {@code 500ms}. A bare number is rejected: a unit is always required.
 */
public final class DurationConverter implements CommandLine.ITypeConverter<Duration> {

    private static final Pattern PART = Pattern.compile("(\\d+)(ms|s|m|h)");

    @Override
    public Duration convert(String value) {
        return parse(value);
    }

    public static Duration parse(String value) {
        Matcher m = PART.matcher(value);
        Duration total = Duration.ZERO;
        int end = 0;
        while (m.find() && m.start() == end) {
            long n = Long.parseLong(m.group(1));
            total = total.plus(switch (m.group(2)) {
                case "ms" -> Duration.ofMillis(n);
                case "s" -> Duration.ofSeconds(n);
                case "m" -> Duration.ofMinutes(n);
                default -> Duration.ofHours(n);
            });
            end = m.end();
        }
        if (value.isEmpty() || end != value.length()) {
            throw new CommandLine.TypeConversionException(
                    "invalid duration '" + value + "': use a number with a unit, e.g. 30s, 5m, 1h30m");
        }
        return total;
    }
}
