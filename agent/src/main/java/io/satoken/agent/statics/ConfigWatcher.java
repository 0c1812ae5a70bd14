package io.satoken.agent.statics;

import io.satoken.agent.config.AgentConfig;
import io.satoken.agent.config.AgentConfigParser;
import io.satoken.agent.config.InvalidConfigException;
import io.satoken.agent.metrics.AgentMetrics;
import io.satoken.agent.refresh.TaskScheduler;
import io.satoken.common.paths.FileErrors;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.time.Duration;
import java.time.InstantSource;
import java.util.Arrays;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Picks up edits to the config file without a restart. The file is read every {@code period}; polling
 * (not inotify) also sees an editor's rename-over and a ConfigMap's symlink swap, and a config file is
 * small. When its bytes change:
 * <ol>
 *   <li>a config that fails validation is rejected as a whole: one error line naming each field, a
 *       metric, and the running config stays;</li>
 *   <li>a config that changes {@code mode} or {@code kubeletDir} is rejected the same way: those need a
 *       restart, since they decide what the agent watches;</li>
 *   <li>otherwise the new config is handed on.</li>
 * </ol>
 * The same bad bytes are reported once, not on every poll.
 */
public final class ConfigWatcher implements AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(ConfigWatcher.class);
    public static final Duration DEFAULT_PERIOD = Duration.ofSeconds(2);

    private final Path file;
    private final TaskScheduler timers;
    private final InstantSource clock;
    private final Duration period;
    private final Consumer<AgentConfig> onChange;
    private final AgentMetrics metrics;

    private AgentConfig current;
    private byte[] lastSeen;
    private TaskScheduler.Cancellable timer;
    private boolean closed;

    public ConfigWatcher(Path file, AgentConfig initial, byte[] initialBytes, TaskScheduler timers,
            InstantSource clock, Duration period, Consumer<AgentConfig> onChange, AgentMetrics metrics) {
        this.file = file;
        this.current = initial;
        this.lastSeen = initialBytes.clone();
        this.timers = timers;
        this.clock = clock;
        this.period = period;
        this.onChange = onChange;
        this.metrics = metrics;
    }

    public synchronized void start() {
        schedule();
    }

    /** The config running now. */
    public synchronized AgentConfig current() {
        return current;
    }

    /** Reads the file once and applies a change; the timer calls this every period. */
    public void check() {
        AgentConfig next;
        synchronized (this) {
            byte[] bytes;
            try {
                bytes = Files.readAllBytes(file);
            } catch (NoSuchFileException e) {
                return; // mid-replace, or removed: keep running what we have
            } catch (IOException e) {
                log.warn("cannot read config {}: {}", file, FileErrors.reason(e));
                return;
            }
            if (Arrays.equals(bytes, lastSeen)) {
                return;
            }
            lastSeen = bytes;
            try {
                next = AgentConfigParser.parse(new String(bytes, java.nio.charset.StandardCharsets.UTF_8));
            } catch (InvalidConfigException e) {
                reject(e.getMessage()); // 1
                return;
            }
            if (next.mode() != current.mode() || !next.kubeletDir().equals(current.kubeletDir())) {
                reject("mode and kubeletDir cannot change while running (mode " + current.mode() + " -> "
                        + next.mode() + ", kubeletDir " + current.kubeletDir() + " -> " + next.kubeletDir()
                        + "); restart the agent"); // 2
                return;
            }
            current = next;
        }
        metrics.configReload(true);
        log.info("config {} reloaded: {} static projection(s)", file, next.projections().size());
        onChange.accept(next); // 3
    }

    @Override
    public synchronized void close() {
        closed = true;
        if (timer != null) {
            timer.cancel();
        }
    }

    private void reject(String why) {
        metrics.configReload(false);
        metrics.invalidProjection("config");
        log.error("config {} rejected, the previous config keeps running: {}", file, why);
    }

    private synchronized void schedule() {
        if (!closed) {
            timer = timers.schedule(clock.instant().plus(period), () -> {
                try {
                    check();
                } finally {
                    schedule();
                }
            });
        }
    }
}
