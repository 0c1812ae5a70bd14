package io.satoken.controlplane.kube;

import io.kubernetes.client.openapi.ApiException;
import io.satoken.common.kube.Failures;
import io.satoken.common.text.DurationText;
import java.time.Duration;
import java.time.Instant;
import java.time.InstantSource;
import java.util.function.BiConsumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What one informer does when its list or watch fails. client-java calls this on the informer's reflector thread
 * after every failure and runs the reflector again 1 s after it returns; left to itself it logs an ERROR (and an
 * INFO when it starts over) every second per informer while the API server is down. This writes one WARN line per
 * failed attempt instead, naming the kind, the attempt, the reason and when the next attempt comes, and holds the
 * thread so that attempts back off: 1s, 2s, 4s ... 30s apart, as client-go's reflector backs off (800ms to 30s).
 *
 * <ol>
 *   <li>A failure more than {@link #QUIET} after the previous attempt began (a watch that ran for a while, then
 *       broke) starts a new count at attempt 1.</li>
 *   <li>The line: {@code listing and watching namespaces failed (attempt 3); retrying in 4s: <reason>}, the reason on
 *       the same line (the API server's status, or the network error); at debug, the stack trace follows.</li>
 *   <li>The wait: the backoff less client-java's own 1 s pause. Stopping the informer interrupts it: then nothing
 *       is logged and the interrupt is kept for client-java to see.</li>
 * </ol>
 */
final class ListWatchBackoff<T> implements BiConsumer<Class<T>, Throwable> {

    /** The first retry's delay; each failure doubles it, up to {@link #CAP}. */
    static final Duration FIRST = Duration.ofSeconds(1);
    static final Duration CAP = Duration.ofSeconds(30);
    /** client-java's fixed pause between two runs of a reflector. */
    static final Duration CLIENT_PAUSE = Duration.ofSeconds(1);
    /** A failure this long after the previous attempt began is a new outage, counted from 1. */
    static final Duration QUIET = Duration.ofMinutes(1);

    private static final Logger log = LoggerFactory.getLogger(ListWatchBackoff.class);

    /** The wait between attempts; a seam for tests. */
    interface Sleeper {
        void sleep(Duration d) throws InterruptedException;
    }

    private final String kind;
    private final InstantSource clock;
    private final Sleeper sleeper;
    private int attempts;
    private Instant attemptBegan;

    /** @param kind what the informer lists, plural, as a person says it: {@code namespaces}, {@code token Secrets} */
    ListWatchBackoff(String kind) {
        this(kind, InstantSource.system(), d -> Thread.sleep(d.toMillis()));
    }

    ListWatchBackoff(String kind, InstantSource clock, Sleeper sleeper) {
        this.kind = kind;
        this.clock = clock;
        this.sleeper = sleeper;
    }

    @Override
    public synchronized void accept(Class<T> type, Throwable error) {
        if (Thread.currentThread().isInterrupted()) {
            return; // the informer is being stopped: not a failure worth a line
        }
        Instant now = clock.instant();
        // 1. a new outage starts a new count
        if (attemptBegan == null || Duration.between(attemptBegan, now).compareTo(QUIET) > 0) {
            attempts = 0;
        }
        attempts++;
        Duration next = delay(attempts);
        // 2. one line
        String line = "listing and watching {} failed (attempt {}); retrying in {}: {}";
        if (log.isDebugEnabled()) {
            log.warn(line, kind, attempts, DurationText.of(next), reason(error), error);
        } else {
            log.warn(line, kind, attempts, DurationText.of(next), reason(error));
        }
        // 3. the wait
        try {
            sleeper.sleep(next.minus(CLIENT_PAUSE));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        attemptBegan = clock.instant().plus(CLIENT_PAUSE);
    }

    /** The delay before the attempt after failed attempt {@code n}: 1s, 2s, 4s, ... at most {@link #CAP}. */
    static Duration delay(int n) {
        Duration d = FIRST.multipliedBy(1L << Math.min(n - 1, 30));
        return d.compareTo(CAP) > 0 ? CAP : d;
    }

    /** The API server's answer (code and Status message), else the innermost cause: what a person can act on. */
    static String reason(Throwable error) {
        if (error instanceof ApiException api && api.getCode() != 0) {
            return Failures.said(api);
        }
        Throwable root = error;
        while (root.getCause() != null && root.getCause() != root) {
            root = root.getCause();
        }
        return (root == error ? "" : "no answer from the API server: ") + Failures.inWords(root);
    }
}
