package io.satoken.common.logging;

import ch.qos.logback.classic.spi.IThrowableProxy;
import java.util.regex.Pattern;

/**
 * A logged exception as one line: its type and message, then each cause's, e.g. {@code
 * io.kubernetes.client.openapi.ApiException: Message: java.net.ConnectException: Failed to connect; caused by:
 * java.net.ConnectException: Failed to connect}. A cause whose message the line already holds (a wrapper
 * made with {@code new X(what + cause.getMessage(), cause)}) is not repeated.
 */
final class ErrorSummary {

    private static final Pattern LINE_BREAKS = Pattern.compile("\\s*[\\r\\n]+\\s*");
    /** Enough for the wrappers client-java and okhttp stack up; a longer chain is in the debug stack trace. */
    private static final int MAX_CAUSES = 4;

    private ErrorSummary() {
    }

    static String of(IThrowableProxy error) {
        StringBuilder line = new StringBuilder();
        int depth = 0;
        for (IThrowableProxy t = error; t != null && depth <= MAX_CAUSES; t = t.getCause(), depth++) {
            String message = t.getMessage() == null ? null : oneLine(t.getMessage());
            if (line.length() > 0) {
                if (message != null && !message.isEmpty() ? line.indexOf(message) >= 0
                        : line.indexOf(t.getClassName()) >= 0) {
                    continue;
                }
                line.append("; caused by: ");
            }
            line.append(t.getClassName());
            if (message != null && !message.isEmpty()) {
                line.append(": ").append(message);
            }
        }
        return line.toString();
    }

    /** True when {@code message} already gives the exception's own message, so a text line need not repeat it. */
    static boolean said(String message, IThrowableProxy error) {
        String own = error.getMessage() == null ? "" : oneLine(error.getMessage());
        return !own.isEmpty() && message != null && oneLine(message).contains(own);
    }

    /** Line breaks, and the blanks around them, as one space: a log line stays one line. */
    static String oneLine(String text) {
        return LINE_BREAKS.matcher(text).replaceAll(" ").strip();
    }
}
