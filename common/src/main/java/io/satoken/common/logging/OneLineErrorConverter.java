package io.satoken.common.logging;

import ch.qos.logback.classic.pattern.ThrowableHandlingConverter;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.classic.spi.IThrowableProxy;

/**
 * {@code %oneLineError}: a logged exception on the line itself, {@code ": type: message; caused by: ..."},
 * or nothing when the message already says it. Below debug the text format uses it instead of logback's
 * stack trace, so a failure that repeats (an API outage, a retry loop) costs one line each time.
 */
public final class OneLineErrorConverter extends ThrowableHandlingConverter {

    @Override
    public String convert(ILoggingEvent event) {
        IThrowableProxy error = event.getThrowableProxy();
        if (error == null || ErrorSummary.said(event.getFormattedMessage(), error)) {
            return "";
        }
        return ": " + ErrorSummary.of(error);
    }
}
