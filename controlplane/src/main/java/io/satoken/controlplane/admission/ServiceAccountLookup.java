package io.satoken.controlplane.admission;

import com.github.benmanes.caffeine.cache.Caffeine;
import com.github.benmanes.caffeine.cache.Ticker;
import io.kubernetes.client.openapi.ApiException;
import io.kubernetes.client.openapi.models.V1ServiceAccount;
import io.satoken.common.kube.Failures;
import io.satoken.controlplane.kube.ApiErrors;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ThreadLocalRandom;
import java.util.function.IntSupplier;

/**
 * AD-4: finds a pod's ServiceAccount, from the informer cache first, then with live GETs. A
 * ServiceAccount that was just created may not be in the cache yet; {@code default} may not exist yet
 * at all in a namespace created a moment ago, so it gets {@value #DEFAULT_ATTEMPTS} live attempts with one
 * random pause of 100–199 ms between them, and any other name gets one.
 *
 * <p>A ServiceAccount found missing after every attempt is remembered as missing for
 * {@link #MISSING_TTL}, so reviews naming it again (a forged review repeated a thousand times, say) are
 * answered at once instead of each holding a worker for the retries. This does not undo what the retries
 * are for:
 * <ul>
 *   <li>only the full sequence's NotFound is remembered, never another error nor a partial result;</li>
 *   <li>the informer cache is read before the remembered result, so an account is never reported missing
 *       once the informer has seen it (typically milliseconds after it is created);</li>
 *   <li>the entry lasts a few seconds, so a lookup in the short gap between an account's creation and the
 *       informer seeing it is refused at worst for that long, as a pod created before the account is.</li>
 * </ul>
 *
 * <p>Reviews naming a new missing namespace each time are not remembered, and each would hold a worker for the
 * whole retry sequence (1–2 s for {@code default}). So at most {@value #RETRYING} lookups retry at once, and at
 * most {@value #RETRYING_PER_NAMESPACE} in one namespace: a flood of forged reviews holds no more workers than
 * that, and a burst of pods in one new namespace leaves retries for the others. A lookup that finds no room is
 * answered from its first attempt, at once, as NotFound, saying it was not retried (the pod's creator tries
 * again, as it does after any refusal); it is not remembered.
 */
public final class ServiceAccountLookup {

    /** AD-4: live attempts for {@code default}. */
    static final int DEFAULT_ATTEMPTS = 10;
    /** How long an account found missing is remembered as missing. */
    static final Duration MISSING_TTL = Duration.ofSeconds(5);
    /** At most this many missing accounts are remembered; a flood of new names evicts the oldest. */
    static final int MISSING_ENTRIES = 10_000;
    /** At most this many lookups retry at once (a quarter of the webhook's 16 workers). */
    static final int RETRYING = 4;
    /** At most this many lookups retry at once in one namespace. */
    static final int RETRYING_PER_NAMESPACE = 2;

    /** The informer cache's view. */
    @FunctionalInterface
    public interface Cache {
        Optional<V1ServiceAccount> get(String namespace, String name);
    }

    /** A live GET; throws the API's error, NotFound included. */
    @FunctionalInterface
    public interface Live {
        V1ServiceAccount get(String namespace, String name) throws ApiException;
    }

    /** Waits between live attempts; tests record instead of sleeping. */
    @FunctionalInterface
    public interface Pause {
        void pause(Duration duration) throws InterruptedException;
    }

    /** The lookup failed; the message is upstream's error text, e.g. {@code serviceaccount "x" not found}. */
    public static final class LookupException extends Exception {
        private static final long serialVersionUID = 1L;

        LookupException(String message) {
            super(message);
        }
    }

    private final Cache cache;
    private final Live live;
    private final Pause pause;
    private final IntSupplier jitterMillis;
    /** "namespace/name" of accounts every attempt found missing. */
    private final com.github.benmanes.caffeine.cache.Cache<String, Boolean> missing;
    /** Lookups retrying now, by namespace; guarded by itself. */
    private final Map<String, Integer> retrying = new HashMap<>();
    private int retryingTotal;

    public ServiceAccountLookup(Cache cache, Live live) {
        this(cache, live, duration -> Thread.sleep(duration.toMillis()),
                () -> ThreadLocalRandom.current().nextInt(100), Ticker.systemTicker());
    }

    /** @param ticker the clock the remembered misses expire by */
    ServiceAccountLookup(Cache cache, Live live, Pause pause, IntSupplier jitterMillis, Ticker ticker) {
        this.cache = cache;
        this.live = live;
        this.pause = pause;
        this.jitterMillis = jitterMillis;
        this.missing = Caffeine.newBuilder().ticker(ticker).executor(Runnable::run)
                .expireAfterWrite(MISSING_TTL).maximumSize(MISSING_ENTRIES).build();
    }

    /**
     * @throws LookupException when every attempt said NotFound (now, or within {@link #MISSING_TTL} before), or
     *     the first did and there was no room to retry; at once on any other API error
     */
    public V1ServiceAccount get(String namespace, String name) throws LookupException, InterruptedException {
        Optional<V1ServiceAccount> cached = cache.get(namespace, name);
        if (cached.isPresent()) {
            return cached.get();
        }
        String key = namespace + "/" + name;
        if (missing.getIfPresent(key) != null) {
            return throwNotFound(name);
        }
        Optional<V1ServiceAccount> found = attempt(namespace, name);
        if (found.isPresent()) {
            return found.get();
        }
        int attempts = ServiceAccountAdmission.DEFAULT_SERVICE_ACCOUNT.equals(name) ? DEFAULT_ATTEMPTS : 1;
        if (attempts > 1) {
            if (!startRetrying(namespace)) {
                throw new LookupException("serviceaccount \"" + name + "\" not found (not retried: " + RETRYING
                        + " lookups of missing ServiceAccounts, or " + RETRYING_PER_NAMESPACE + " in namespace "
                        + namespace + ", are retrying already)");
            }
            try {
                found = retry(namespace, name, attempts - 1);
            } finally {
                stopRetrying(namespace);
            }
            if (found.isPresent()) {
                return found.get();
            }
        }
        missing.put(key, Boolean.TRUE);
        return throwNotFound(name);
    }

    /** The retries after a first NotFound, with one pause drawn for them all, as upstream draws it per lookup. */
    private Optional<V1ServiceAccount> retry(String namespace, String name, int retries)
            throws LookupException, InterruptedException {
        Duration interval = Duration.ofMillis(100 + jitterMillis.getAsInt());
        for (int retry = 0; retry < retries; retry++) {
            pause.pause(interval);
            Optional<V1ServiceAccount> found = attempt(namespace, name);
            if (found.isPresent()) {
                return found;
            }
        }
        return Optional.empty();
    }

    /** One live GET: the account, empty on NotFound. */
    private Optional<V1ServiceAccount> attempt(String namespace, String name) throws LookupException {
        try {
            return Optional.of(live.get(namespace, name));
        } catch (ApiException e) {
            if (!ApiErrors.isNotFound(e)) {
                throw new LookupException(Failures.said(e));
            }
            return Optional.empty();
        }
    }

    /** Takes a place among the lookups retrying, in all and in {@code namespace}; false when there is none. */
    private boolean startRetrying(String namespace) {
        synchronized (retrying) {
            if (retryingTotal >= RETRYING || retrying.getOrDefault(namespace, 0) >= RETRYING_PER_NAMESPACE) {
                return false;
            }
            retryingTotal++;
            retrying.merge(namespace, 1, Integer::sum);
            return true;
        }
    }

    private void stopRetrying(String namespace) {
        synchronized (retrying) {
            retryingTotal--;
            retrying.computeIfPresent(namespace, (ns, n) -> n == 1 ? null : n - 1);
        }
    }

    private static V1ServiceAccount throwNotFound(String name) throws LookupException {
        throw new LookupException("serviceaccount \"" + name + "\" not found");
    }
}
