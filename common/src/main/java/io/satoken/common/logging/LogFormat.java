package io.satoken.common.logging;

/** How a log line is written: {@code --log-format text|json}. */
public enum LogFormat {
    /** {@code 2026-01-02T03:04:05.678Z INFO  [main] i.s.agent.runtime.AgentRuntime - message}. */
    TEXT,
    /** One JSON object per line, with the fields {@link JsonLineLayout} names. */
    JSON
}
