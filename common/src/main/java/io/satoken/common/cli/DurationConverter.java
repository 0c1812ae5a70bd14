package io.satoken.common.cli;

import java.time.Duration;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import picocli.CommandLine;

/**
 * Parses durations the way Kubernetes tools write them: one or more parts, each a whole number and a unit
 * ({@code ms}, {@code s}, {@code m}, {@code h}), summed: {@code 500ms}, {@code 30s}, {@code 5m}, {@code 1h30m}.
 * A bare number, a sign, a fraction or a space is rejected, with a message naming the value.
 *
 * <p>The one grammar of both programs' duration flags. The agent always took several parts; the control plane's
 * {@code --leader-elect-*} flags once took a single part and now take {@code 1h30m} too.
 */
public final class DurationConverter implements CommandLine.ITypeConverter<Duration> {

    private static final Pattern PART = Pattern.compile("(\\d+)(ms|s|m|h)");

    @Override
    public Duration convert(String value) {
        return parse(value);
    }

    /**
     * The duration {@code value} stands for.
     *
     * @throws CommandLine.TypeConversionException when it is not parts of a number and a unit, naming the value
     */
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
            // both programs' former wordings, which their tests and users' scripts may look for
            throw new CommandLine.TypeConversionException("invalid duration '" + value
                    + "': expected a duration like 15s, 500ms, 2m or 1h30m (a number with a unit, no spaces)");
        }
        return total;
    }
}
