package io.satoken.common.logging;

import ch.qos.logback.classic.pattern.ClassicConverter;
import ch.qos.logback.classic.spi.ILoggingEvent;

/**
 * {@code %oneLineMsg}: the message with its line breaks as spaces. A message may carry text from outside
 * (an exception from the API server, a path); one event stays one line, and no line can be forged.
 */
public final class OneLineMessageConverter extends ClassicConverter {

    @Override
    public String convert(ILoggingEvent event) {
        String message = event.getFormattedMessage();
        return message == null ? "" : ErrorSummary.oneLine(message);
    }
}
