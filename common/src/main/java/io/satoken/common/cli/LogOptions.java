package io.satoken.common.cli;

import io.satoken.common.logging.LogFormat;
import io.satoken.common.logging.LogLevel;
import io.satoken.common.logging.LogSetup;
import java.util.Arrays;
import java.util.Locale;
import java.util.stream.Collectors;
import picocli.CommandLine;
import picocli.CommandLine.Option;

/**
 * {@code --log-level} and {@code --log-format}, mixed into every command that runs for a while
 * ({@code @Mixin LogOptions logs}). The command calls {@link #apply()} first, before anything logs.
 */
public final class LogOptions {

    @Option(names = "--log-level", paramLabel = "LEVEL", defaultValue = "info", converter = LevelConverter.class,
            description = "error, warn, info or debug (default: ${DEFAULT-VALUE}). debug adds satoken's debug"
                    + " lines and the stack trace of every logged exception.")
    LogLevel level;

    @Option(names = "--log-format", paramLabel = "FORMAT", defaultValue = "text", converter = FormatConverter.class,
            description = "text, or json for one JSON object per line (default: ${DEFAULT-VALUE}).")
    LogFormat format;

    /** Sets up logging as the flags say. */
    public void apply() {
        LogSetup.apply(level, format);
    }

    public LogLevel level() {
        return level;
    }

    public LogFormat format() {
        return format;
    }

    /** {@code error}, {@code warn}, ...: a constant's name in any case; the flags are written in lower case. */
    static <E extends Enum<E>> E parse(String value, Class<E> type) {
        for (E e : type.getEnumConstants()) {
            if (e.name().equalsIgnoreCase(value)) {
                return e;
            }
        }
        String expected = Arrays.stream(type.getEnumConstants()).map(e -> e.name().toLowerCase(Locale.ROOT))
                .collect(Collectors.joining(", "));
        throw new CommandLine.TypeConversionException("expected one of " + expected + ", got \"" + value + "\"");
    }

    static final class LevelConverter implements CommandLine.ITypeConverter<LogLevel> {
        @Override
        public LogLevel convert(String value) {
            return parse(value, LogLevel.class);
        }
    }

    static final class FormatConverter implements CommandLine.ITypeConverter<LogFormat> {
        @Override
        public LogFormat convert(String value) {
            return parse(value, LogFormat.class);
        }
    }
}
