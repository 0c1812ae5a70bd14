package io.satoken.controlplane.https;

import java.util.HashMap;
import java.util.Map;

/**
 * How many bytes of request bodies the webhook holds at once, in all and per client. A request claims its
 * announced length when its headers arrive, before any of its body is read, and gives it back once it is answered,
 * so bodies still arriving and bodies waiting for a reviewer share one bound. Without it the webhook could hold
 * 1,024 queued reviews of 7 MiB each, plus whatever any number of connections were still sending.
 *
 * <p>One client (a remote address, or the subject of its TLS client certificate) may hold at most
 * {@code clientLimit} of the {@code limit}: a client that opens many slow requests fills its own share, not the
 * budget every other client, the API server among them, needs.
 */
final class BodyBudget {

    private final long limit;
    private final long clientLimit;
    private final Map<String, Long> byClient = new HashMap<>();
    private long held;

    /**
     * @param limit the bytes all clients may hold at once
     * @param clientLimit the bytes one client may hold at once, at most {@code limit}
     */
    BodyBudget(long limit, long clientLimit) {
        if (limit <= 0 || clientLimit <= 0) {
            throw new IllegalArgumentException("the body budget and each client's share must be positive, got "
                    + limit + " and " + clientLimit);
        }
        this.limit = limit;
        this.clientLimit = Math.min(clientLimit, limit);
    }

    /** A budget with no per-client share: one client may take all of it. */
    BodyBudget(long limit) {
        this(limit, limit);
    }

    /** Why a claim was refused: the whole budget is full, or the client's share is. */
    enum Refusal { BUDGET, CLIENT_SHARE }

    /**
     * Claims {@code bytes} for {@code client}; null when they do not fit beside what is already held, in all or by
     * that client ({@link #refusal} says which).
     */
    synchronized Reservation tryReserve(String client, long bytes) {
        if (refusal(client, bytes) != null) {
            return null;
        }
        held += bytes;
        byClient.merge(client, bytes, Long::sum);
        return new Reservation(this, client, bytes);
    }

    /** Why {@code client} could not claim {@code bytes} now; null when it could. */
    synchronized Refusal refusal(String client, long bytes) {
        if (held + bytes > limit) {
            return Refusal.BUDGET;
        }
        if (heldBy(client) + bytes > clientLimit) {
            return Refusal.CLIENT_SHARE;
        }
        return null;
    }

    synchronized long held() {
        return held;
    }

    synchronized long heldBy(String client) {
        return byClient.getOrDefault(client, 0L);
    }

    long limit() {
        return limit;
    }

    long clientLimit() {
        return clientLimit;
    }

    private synchronized void give(String client, long bytes) {
        held -= bytes;
        byClient.computeIfPresent(client, (c, b) -> b == bytes ? null : b - bytes);
    }

    /**
     * A claim on the budget, which may grow (by what the review's parse keeps) until it is released; releasing it
     * more than once releases it once.
     */
    static final class Reservation {
        /** For a request that claimed nothing; it cannot grow. */
        static final Reservation NONE = new Reservation(null, "", 0);

        private final BodyBudget budget;
        private final String client;
        private long bytes;
        private boolean released;

        private Reservation(BodyBudget budget, String client, long bytes) {
            this.budget = budget;
            this.client = client;
            this.bytes = bytes;
        }

        /** Claims {@code more} bytes for the same client, if they fit beside what is held; false when not. */
        boolean grow(long more) {
            if (budget == null) {
                return false;
            }
            synchronized (budget) {
                if (released || budget.refusal(client, more) != null) {
                    return false;
                }
                budget.held += more;
                budget.byClient.merge(client, more, Long::sum);
                bytes += more;
                return true;
            }
        }

        void release() {
            if (budget == null) {
                return;
            }
            synchronized (budget) {
                if (!released) {
                    released = true;
                    budget.give(client, bytes);
                }
            }
        }
    }
}
