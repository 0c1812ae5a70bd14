package io.satoken.common.testing;

import ch.qos.logback.classic.LoggerContext;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.OutputStreamAppender;
import io.satoken.common.logging.DefaultLogConfigurator;
import io.satoken.common.logging.LogFormat;
import io.satoken.common.logging.LogLevel;
import io.satoken.common.logging.LogSetup;
import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.util.List;
import org.slf4j.LoggerFactory;

/**
 * What the process logs while this is open, written exactly as {@code --log-level} and {@code --log-format}
 * would have it; {@link #close()} puts back the default set-up (info, text, stderr). The logging set-up is
 * the whole JVM's: use it in tests that run one at a time.
 */
public final class CapturedLogs implements AutoCloseable {

    private final ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    private final LoggerContext context = (LoggerContext) LoggerFactory.getILoggerFactory();

    private CapturedLogs(LogLevel level, LogFormat format) {
        LogSetup.configure(context, level, format, new Buffer());
    }

    public static CapturedLogs start(LogLevel level, LogFormat format) {
        return new CapturedLogs(level, format);
    }

    /** Everything written so far. */
    public String text() {
        synchronized (bytes) {
            return bytes.toString(StandardCharsets.UTF_8);
        }
    }

    /** The lines written so far. */
    public List<String> lines() {
        return text().lines().toList();
    }

    @Override
    public void close() {
        DefaultLogConfigurator defaults = new DefaultLogConfigurator();
        defaults.setContext(context);
        defaults.configure(context);
    }

    /** An appender into {@link #bytes}; like logback's ConsoleAppender it sets its stream when started. */
    private final class Buffer extends OutputStreamAppender<ILoggingEvent> {
        @Override
        public void start() {
            setOutputStream(bytes);
            super.start();
        }
    }
}
