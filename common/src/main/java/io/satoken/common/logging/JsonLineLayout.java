package io.satoken.common.logging;

import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.classic.spi.IThrowableProxy;
import ch.qos.logback.classic.spi.ThrowableProxyUtil;
import ch.qos.logback.core.LayoutBase;
import com.google.gson.stream.JsonWriter;
import java.io.IOException;
import java.io.StringWriter;
import java.io.UncheckedIOException;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;

/**
 * {@code --log-format json}: one JSON object per line with stable fields, in this order:
 *
 * <ul>
 *   <li>{@code time}: ISO-8601 UTC, milliseconds, {@code 2026-01-02T03:04:05.678Z};
 *   <li>{@code level}: {@code ERROR}, {@code WARN}, {@code INFO} or {@code DEBUG};
 *   <li>{@code logger}: the full class name of the logger;
 *   <li>{@code thread};
 *   <li>{@code message}: the formatted message;
 *   <li>{@code error}: only with an exception, its type and message and its causes', on one line;
 *   <li>{@code stack}: only with an exception at {@code --log-level debug}, the stack trace.
 * </ul>
 *
 * <p>Not logback's own {@code JsonEncoder}: that one names the fields otherwise ({@code loggerName},
 * {@code threadName}), writes epoch milliseconds, and always the whole stack trace.
 */
public final class JsonLineLayout extends LayoutBase<ILoggingEvent> {

    static final DateTimeFormatter TIME = DateTimeFormatter.ofPattern("yyyy-MM-dd'T'HH:mm:ss.SSS'Z'")
            .withZone(ZoneOffset.UTC);

    private final boolean stackTraces;

    /** @param stackTraces whether an exception's stack trace goes in a {@code stack} field */
    public JsonLineLayout(boolean stackTraces) {
        this.stackTraces = stackTraces;
    }

    @Override
    public String doLayout(ILoggingEvent event) {
        StringWriter line = new StringWriter(256);
        try (JsonWriter json = new JsonWriter(line)) {
            json.beginObject();
            json.name("time").value(TIME.format(event.getInstant()));
            json.name("level").value(event.getLevel().toString());
            json.name("logger").value(event.getLoggerName());
            json.name("thread").value(event.getThreadName());
            json.name("message").value(event.getFormattedMessage());
            IThrowableProxy error = event.getThrowableProxy();
            if (error != null) {
                json.name("error").value(ErrorSummary.of(error));
                if (stackTraces) {
                    json.name("stack").value(ThrowableProxyUtil.asString(error));
                }
            }
            json.endObject();
        } catch (IOException e) {
            throw new UncheckedIOException("a StringWriter does not fail", e);
        }
        return line.append('\n').toString();
    }
}
