package io.satoken.controlplane.controller;

import io.kubernetes.client.extended.workqueue.DefaultRateLimitingQueue;
import io.kubernetes.client.extended.workqueue.RateLimitingQueue;
import io.kubernetes.client.extended.workqueue.ratelimiter.BucketRateLimiter;
import io.kubernetes.client.extended.workqueue.ratelimiter.ItemExponentialFailureRateLimiter;
import io.kubernetes.client.extended.workqueue.ratelimiter.MaxOfRateLimiter;
import io.kubernetes.client.extended.workqueue.ratelimiter.RateLimiter;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Runs one controller's workers over a rate-limited queue of keys, as upstream controllers do: a key is
 * handled by one worker at a time, duplicates queued meanwhile collapse into one, a {@code RETRY} comes
 * back after the rate limiter's backoff (per key 5 ms doubling to 1000 s, and 10/s overall, upstream's
 * default), and after {@code maxRetries} failures in a row the key is dropped (TC-2) until an event queues
 * it again.
 *
 * <p>The queue exists from construction, so informer events can be queued while the caches fill; workers
 * start only with {@link #start()}, once those caches have synced.
 */
public final class ControllerLoop<K> implements AutoCloseable {

    /** No cap: retry until the key succeeds (the ServiceAccount, root-CA and aggregation controllers). */
    public static final int UNLIMITED_RETRIES = 0;

    private static final Logger log = LoggerFactory.getLogger(ControllerLoop.class);

    private final String name;
    private final Reconciler<K> reconciler;
    private final int workers;
    private final int maxRetries;
    private final ControllerMetrics metrics;
    private final ExecutorService delayThread;
    private final RateLimitingQueue<K> queue;
    private final List<Thread> threads = new ArrayList<>();

    public ControllerLoop(String name, Reconciler<K> reconciler, int workers, int maxRetries,
            ControllerMetrics metrics) {
        this(name, reconciler, workers, maxRetries, metrics, upstreamDefault());
    }

    /**
     * client-go's {@code DefaultControllerRateLimiter}: per key 5 ms doubling to 1000 s, and overall a bucket
     * of 100 refilled at 10 per second. (client-java's class of that name refills 10 per minute.)
     */
    static <K> RateLimiter<K> upstreamDefault() {
        return new MaxOfRateLimiter<>(new ItemExponentialFailureRateLimiter<>(Duration.ofMillis(5), Duration.ofSeconds(1000)),
                new BucketRateLimiter<>(100, 10, Duration.ofSeconds(1)));
    }

    /** As the public constructor, with the backoff given (tests use a zero-delay limiter). */
    ControllerLoop(String name, Reconciler<K> reconciler, int workers, int maxRetries, ControllerMetrics metrics,
            RateLimiter<K> rateLimiter) {
        if (workers < 1) {
            throw new IllegalArgumentException("workers must be at least 1, got " + workers);
        }
        this.name = name;
        this.reconciler = reconciler;
        this.workers = workers;
        this.maxRetries = maxRetries;
        this.metrics = metrics;
        this.delayThread = Executors.newSingleThreadExecutor(r -> daemon(r, "satoken-" + name + "-delay"));
        this.queue = new DefaultRateLimitingQueue<>(delayThread, rateLimiter);
        metrics.queueDepth(name, queue::length);
    }

    /** Queues a key; a key already waiting is not queued twice. */
    public void enqueue(K key) {
        queue.add(key);
    }

    /** Starts the workers. */
    public synchronized void start() {
        for (int i = 0; i < workers; i++) {
            Thread t = daemon(this::work, "satoken-" + name + "-" + i);
            threads.add(t);
            t.start();
        }
    }

    /** Stops taking keys; a reconcile in progress is interrupted. */
    @Override
    public synchronized void close() {
        queue.shutDown();
        threads.forEach(Thread::interrupt);
        delayThread.shutdownNow();
    }

    /** Takes one key and handles it; false when the queue is shut down. Workers loop on this; tests call it. */
    boolean processNext() throws InterruptedException {
        K key = queue.get();
        if (key == null) {
            return false;
        }
        try {
            handle(key);
        } finally {
            queue.done(key);
        }
        return true;
    }

    private void work() {
        try {
            while (!queue.isShuttingDown() && processNext()) {
                // next key
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private void handle(K key) {
        Reconciler.Result result;
        long started = System.nanoTime();
        try {
            result = reconciler.reconcile(key);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return;
        } catch (Exception | LinkageError e) {
            // one line with the reason; the stack trace only at --log-level debug (the queue retries it)
            log.warn("{}: syncing {} failed", name, key, e);
            result = Reconciler.Result.RETRY;
        }
        metrics.reconciled(name, result, System.nanoTime() - started);
        if (result == Reconciler.Result.DONE) {
            queue.forget(key);
        } else if (maxRetries == UNLIMITED_RETRIES || queue.numRequeues(key) < maxRetries) {
            queue.addRateLimited(key);
        } else {
            log.warn("{}: dropping {} after {} retries", name, key, maxRetries);
            metrics.droppedAfterRetries(name);
            queue.forget(key);
        }
    }

    private static Thread daemon(Runnable r, String threadName) {
        Thread t = new Thread(r, threadName);
        t.setDaemon(true);
        return t;
    }
}
