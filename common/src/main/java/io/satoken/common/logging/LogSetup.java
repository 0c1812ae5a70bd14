package io.satoken.common.logging;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.LoggerContext;
import ch.qos.logback.classic.PatternLayout;
import ch.qos.logback.classic.jul.LevelChangePropagator;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.ConsoleAppender;
import ch.qos.logback.core.Layout;
import ch.qos.logback.core.OutputStreamAppender;
import ch.qos.logback.core.encoder.LayoutWrappingEncoder;
import java.nio.charset.StandardCharsets;
import java.util.Locale;
import org.slf4j.ILoggerFactory;
import org.slf4j.LoggerFactory;
import org.slf4j.bridge.SLF4JBridgeHandler;

/**
 * How both programs log: through logback, one appender on stderr, every line stamped with ISO-8601 UTC
 * time, as text or as JSON lines. What libraries log through {@code java.util.logging} (gRPC, okhttp)
 * takes the same way.
 *
 * <p>The level applies to satoken's own loggers ({@code io.satoken}). Libraries (client-java, okhttp,
 * gRPC, netty) log at info at most: their debug output is mostly wire-level noise. Below debug an
 * exception is written on its line ({@link OneLineErrorConverter}, or the JSON {@code error} field);
 * at debug its stack trace follows.
 */
public final class LogSetup {

    /** satoken's own loggers: the ones {@code --log-level debug} opens up. */
    static final String OWN_LOGGERS = "io.satoken";
    static final String REFLECTOR_LOGGER = "io.kubernetes.client.informer.cache.ReflectorRunnable";
    static final String TEXT_PATTERN = "%d{yyyy-MM-dd'T'HH:mm:ss.SSS'Z',UTC} %-5level [%thread] %logger{36} - %oneLineMsg";

    private LogSetup() {
    }

    /**
     * Applies {@code --log-level} and {@code --log-format} to the running process. Does nothing when slf4j
     * is bound to another backend than logback (a test that brings its own).
     */
    public static void apply(LogLevel level, LogFormat format) {
        ILoggerFactory factory = LoggerFactory.getILoggerFactory();
        if (factory instanceof LoggerContext context) {
            configure(context, level, format, stderr());
        }
    }

    static ConsoleAppender<ILoggingEvent> stderr() {
        ConsoleAppender<ILoggingEvent> stderr = new ConsoleAppender<>();
        stderr.setTarget("System.err");
        return stderr;
    }

    /**
     * Replaces {@code context}'s whole configuration: {@code appender} (not yet started) becomes the only
     * one, with the layout of {@code format}. Tests pass an appender of their own (common's CapturedLogs).
     */
    public static void configure(LoggerContext context, LogLevel level, LogFormat format,
            OutputStreamAppender<ILoggingEvent> appender) {
        context.reset();
        boolean stackTraces = level == LogLevel.DEBUG;
        Layout<ILoggingEvent> layout = format == LogFormat.JSON ? new JsonLineLayout(stackTraces) : textLayout(stackTraces);
        layout.setContext(context);
        layout.start();
        LayoutWrappingEncoder<ILoggingEvent> encoder = new LayoutWrappingEncoder<>();
        encoder.setContext(context);
        encoder.setLayout(layout);
        encoder.setCharset(StandardCharsets.UTF_8);
        encoder.start();

        InformerStopFilter quietStop = new InformerStopFilter();
        quietStop.setContext(context);
        quietStop.start();
        appender.setContext(context);
        appender.setName(format.name().toLowerCase(Locale.ROOT));
        appender.setEncoder(encoder);
        appender.addFilter(quietStop);
        appender.start();

        // gRPC and okhttp log through java.util.logging: bridged, their lines get the same form; the
        // propagator gives JUL logback's levels, so JUL does not build records that would be dropped
        LevelChangePropagator julLevels = new LevelChangePropagator();
        julLevels.setContext(context);
        julLevels.setResetJUL(true);
        julLevels.start();
        context.addListener(julLevels);
        if (!SLF4JBridgeHandler.isInstalled()) {
            SLF4JBridgeHandler.removeHandlersForRootLogger();
            SLF4JBridgeHandler.install();
        }

        Logger root = context.getLogger(Logger.ROOT_LOGGER_NAME);
        Level own = level.logback();
        root.setLevel(own.isGreaterOrEqual(Level.INFO) ? own : Level.INFO);
        root.addAppender(appender);
        context.getLogger(OWN_LOGGERS).setLevel(own);
        // client-java's reflector says "Start listing and watching" at INFO on every attempt, once a second per
        // informer while the API server is down; the control plane's ListWatchBackoff logs each failed attempt
        context.getLogger(REFLECTOR_LOGGER).setLevel(Level.WARN);
    }

    private static Layout<ILoggingEvent> textLayout(boolean stackTraces) {
        PatternLayout layout = new PatternLayout();
        layout.getInstanceConverterMap().put("oneLineMsg", OneLineMessageConverter::new);
        layout.getInstanceConverterMap().put("oneLineError", OneLineErrorConverter::new);
        // at debug logback's own %ex: the stack trace on the lines after the message
        layout.setPattern(TEXT_PATTERN + (stackTraces ? "%n%ex" : "%oneLineError%n"));
        return layout;
    }
}
