package io.satoken.common.health;

import java.time.Duration;

/**
 * Bounds on what the clients of a {@link NonBlockingHttpServer} may hold; its class comment says where each applies.
 * Over a Unix domain socket every client is one client ({@link ClientKey#LOCAL}), so there the per-client limit
 * bounds them all together.
 */
record Limits(Duration readTimeout, Duration writeTimeout, int maxHeadBytes, int maxConnections,
        int maxConnectionsPerClient, int workers) {

    /**
     * A request within 5 s (kubelet sends its probe at once), its answer taken within 10 s, 8 KiB of headers,
     * 64 connections and 8 per client, two workers so a scrape never waits on a probe.
     */
    static Limits defaults() {
        return new Limits(Duration.ofSeconds(5), Duration.ofSeconds(10), 8192, 64, 8, 2);
    }
}
