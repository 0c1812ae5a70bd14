package io.satoken.agent.reads;

import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;

/**
 * The read tracker's metrics, node-wide with no per-pod label (a pod's name is in its Event and in {@code explain}):
 *
 * <pre>
 * satoken_token_not_reread_total    consumers reported for not opening a rotated token in time
 * satoken_token_files_not_reread    files whose consumer was reported and has not opened them since
 * satoken_token_expiring_unread_total  consumers reported again, still holding a token about to expire
 * satoken_token_files_expiring_unread  files whose consumer was reported so and has not opened them since
 * satoken_read_watched_directories  token directories whose current version is watched for opens
 * </pre>
 */
public final class ReadMetrics {

    private ReadMetrics() {
    }

    public static void register(MeterRegistry registry, ReadTracker tracker) {
        FunctionCounter.builder("satoken.token.not.reread", tracker, ReadTracker::reported)
                .description("Token files whose consumer did not open the rotated token in time").register(registry);
        Gauge.builder("satoken.token.files.not.reread", tracker, ReadTracker::notReread)
                .description("Token files whose consumer still holds the token before the last rotation")
                .register(registry);
        FunctionCounter.builder("satoken.token.expiring.unread", tracker, ReadTracker::expiringReported)
                .description("Token files whose consumer still held the old token within the margin of its expiry")
                .register(registry);
        Gauge.builder("satoken.token.files.expiring.unread", tracker, ReadTracker::expiringUnread)
                .description("Token files whose consumer holds a token about to expire and has not opened the new one")
                .register(registry);
        Gauge.builder("satoken.read.watched.directories", tracker, ReadTracker::watchedDirectories)
                .description("Token directories watched for opens").register(registry);
    }
}
