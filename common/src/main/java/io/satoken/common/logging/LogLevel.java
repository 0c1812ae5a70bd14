package io.satoken.common.logging;

import ch.qos.logback.classic.Level;

/** The least severe level logged: {@code --log-level error|warn|info|debug}. */
public enum LogLevel {
    ERROR(Level.ERROR),
    WARN(Level.WARN),
    INFO(Level.INFO),
    /** satoken's own debug lines, and a stack trace with every logged exception. */
    DEBUG(Level.DEBUG);

    private final Level logback;

    LogLevel(Level logback) {
        this.logback = logback;
    }

    Level logback() {
        return logback;
    }
}
