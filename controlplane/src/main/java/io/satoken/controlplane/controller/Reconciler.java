package io.satoken.controlplane.controller;

/**
 * A controller's sync function for one key. It reads current state from listers (never from the event
 * that queued the key) and says whether the key should be tried again.
 */
@FunctionalInterface
public interface Reconciler<K> {

    /** What the loop does with the key next. */
    enum Result {
        /** Finished, or failed in a way a retry cannot fix: forget the key's failures. */
        DONE,
        /** Failed in a way a retry may fix: requeue with the rate limiter's backoff. */
        RETRY
    }

    /**
     * @throws Exception an unexpected failure; the loop logs it and treats it as {@link Result#RETRY}
     */
    Result reconcile(K key) throws Exception;
}
