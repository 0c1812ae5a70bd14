package io.satoken.controlplane.admission;

import io.kubernetes.client.openapi.ApiException;
import io.kubernetes.client.openapi.models.V1ServiceAccount;
import io.satoken.controlplane.controller.ApiErrors;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.ThreadLocalRandom;
import java.util.function.IntSupplier;

/**
 * AD-4: finds a pod's ServiceAccount, from the informer cache first, then with live GETs. A
 * ServiceAccount that was just created may not be in the cache yet; {@code default} may not exist yet
 * at all in a namespace created a moment ago, so it gets {@value #DEFAULT_ATTEMPTS} live attempts with one
 * random pause of 100–199 ms between them, and any other name gets one.
 */
public final class ServiceAccountLookup {

    /** AD-4: live attempts for {@code default}. */
    static final int DEFAULT_ATTEMPTS = 10;

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

    public ServiceAccountLookup(Cache cache, Live live) {
        this(cache, live, duration -> Thread.sleep(duration.toMillis()),
                () -> ThreadLocalRandom.current().nextInt(100));
    }

    ServiceAccountLookup(Cache cache, Live live, Pause pause, IntSupplier jitterMillis) {
        this.cache = cache;
        this.live = live;
        this.pause = pause;
        this.jitterMillis = jitterMillis;
    }

    /**
     * @throws LookupException when every attempt said NotFound, or at once on any other API error
     */
    public V1ServiceAccount get(String namespace, String name) throws LookupException, InterruptedException {
        Optional<V1ServiceAccount> cached = cache.get(namespace, name);
        if (cached.isPresent()) {
            return cached.get();
        }
        int attempts = ServiceAccountAdmission.DEFAULT_SERVICE_ACCOUNT.equals(name) ? DEFAULT_ATTEMPTS : 1;
        // upstream draws the interval once per lookup
        Duration interval = Duration.ofMillis(100 + jitterMillis.getAsInt());
        for (int attempt = 0; attempt < attempts; attempt++) {
            if (attempt > 0) {
                pause.pause(interval);
            }
            try {
                return live.get(namespace, name);
            } catch (ApiException e) {
                if (!ApiErrors.isNotFound(e)) {
                    throw new LookupException(ApiErrors.describe(e));
                }
            }
        }
        return throwNotFound(name);
    }

    private static V1ServiceAccount throwNotFound(String name) throws LookupException {
        throw new LookupException("serviceaccount \"" + name + "\" not found");
    }
}
