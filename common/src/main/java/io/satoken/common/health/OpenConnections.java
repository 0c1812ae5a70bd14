package io.satoken.common.health;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.BiConsumer;
import java.util.function.Predicate;

/** The open connections of {@link NonBlockingHttpServer}, oldest first, counted per {@link ClientKey} (its step 1). */
final class OpenConnections {

    private final Set<HttpConnection> open = new LinkedHashSet<>();
    private final Map<ClientKey, Integer> perClient = new HashMap<>();
    private final int maxConnections;
    private final int maxConnectionsPerClient;

    OpenConnections(int maxConnections, int maxConnectionsPerClient) {
        this.maxConnections = maxConnections;
        this.maxConnectionsPerClient = maxConnectionsPerClient;
    }

    /**
     * Step 1: whether a connection from {@code client} fits. At a limit, the oldest connection still waiting for its
     * request among those the limit counts is given to {@code close} with the limit's name; none waiting: false.
     */
    boolean makeRoomFor(ClientKey client, BiConsumer<HttpConnection, String> close) {
        if (held(client) >= maxConnectionsPerClient) {
            return closeOldestWaiting(connection -> connection.client.equals(client), "its client's limit", close);
        }
        if (open.size() >= maxConnections) {
            return closeOldestWaiting(connection -> true, "the server's limit", close);
        }
        return true;
    }

    private boolean closeOldestWaiting(Predicate<HttpConnection> among, String limit,
            BiConsumer<HttpConnection, String> close) {
        for (HttpConnection connection : open) {
            if (connection.state == HttpConnection.State.READING && among.test(connection)) {
                close.accept(connection, limit);
                return true;
            }
        }
        return false;
    }

    /** How many connections {@code client} holds. */
    int held(ClientKey client) {
        return perClient.getOrDefault(client, 0);
    }

    void add(HttpConnection connection) {
        open.add(connection);
        perClient.merge(connection.client, 1, Integer::sum);
    }

    /** Forgets the connection; closing its channel is the caller's. */
    void remove(HttpConnection connection) {
        if (open.remove(connection)) {
            perClient.computeIfPresent(connection.client, (client, count) -> count > 1 ? count - 1 : null);
        }
    }

    /** A copy, so the caller may close connections while it goes through them. */
    List<HttpConnection> all() {
        return new ArrayList<>(open);
    }

    /** The connections whose deadline has passed at {@code now}, oldest first. */
    List<HttpConnection> pastDeadline(long now) {
        return open.stream().filter(connection -> now - connection.deadline >= 0).toList();
    }

    /** Nanoseconds from {@code now} to the earliest deadline; {@link Long#MAX_VALUE} when none is open. */
    long nanosToNextDeadline(long now) {
        long wait = Long.MAX_VALUE;
        for (HttpConnection connection : open) {
            wait = Math.min(wait, connection.deadline - now);
        }
        return wait;
    }
}
