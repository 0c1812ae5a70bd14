package io.satoken.controlplane.admission;

import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;

/**
 * How many bytes of AdmissionReview bodies the webhook holds at once. A request claims its announced
 * length when its headers arrive, before any of its body is read, and gives it back once it is answered,
 * so bodies still arriving and bodies waiting for a reviewer share one bound. Without it the webhook could
 * hold 1,024 queued reviews of 7 MiB each, plus whatever any number of connections were still sending.
 */
final class BodyBudget {

    private final long limit;
    private final AtomicLong held = new AtomicLong();

    BodyBudget(long limit) {
        if (limit <= 0) {
            throw new IllegalArgumentException("the body budget must be positive, got " + limit);
        }
        this.limit = limit;
    }

    /** Claims {@code bytes}; null when they do not fit beside what is already held. */
    Reservation tryReserve(long bytes) {
        for (long current = held.get(); current + bytes <= limit; current = held.get()) {
            if (held.compareAndSet(current, current + bytes)) {
                return new Reservation(held, bytes);
            }
        }
        return null;
    }

    long held() {
        return held.get();
    }

    long limit() {
        return limit;
    }

    /** A claim on the budget; releasing it more than once releases it once. */
    static final class Reservation {
        /** For a request that claimed nothing. */
        static final Reservation NONE = new Reservation(new AtomicLong(), 0);

        private final AtomicLong held;
        private final long bytes;
        private final AtomicBoolean released = new AtomicBoolean();

        private Reservation(AtomicLong held, long bytes) {
            this.held = held;
            this.bytes = bytes;
        }

        void release() {
            if (released.compareAndSet(false, true)) {
                held.addAndGet(-bytes);
            }
        }
    }
}
