package io.satoken.agent.pods;

import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;
import io.kubernetes.client.custom.V1Patch;
import io.kubernetes.client.openapi.ApiClient;
import io.kubernetes.client.openapi.ApiException;
import io.kubernetes.client.openapi.apis.CoreV1Api;
import io.kubernetes.client.openapi.models.CoreV1Event;
import io.kubernetes.client.openapi.models.V1EventSource;
import io.kubernetes.client.openapi.models.V1ObjectMeta;
import io.kubernetes.client.openapi.models.V1ObjectReference;
import io.kubernetes.client.openapi.models.V1Pod;
import io.kubernetes.client.util.PatchUtils;
import io.satoken.agent.metrics.AgentMetrics;
import io.satoken.common.kube.Failures;
import java.time.Duration;
import java.time.InstantSource;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Sends Warning Events about pods, the way kubelet's recorder does: the first occurrence creates an
 * Event, a repeat of the same pod, reason and message within an hour patches its {@code count} and
 * {@code lastTimestamp} instead of creating another. Sending happens on one background thread with a
 * bounded queue, so a slow or unavailable API server never stalls the pod watcher; events that do not
 * fit are dropped and counted.
 */
public final class KubeEventRecorder implements PodEventSink, AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(KubeEventRecorder.class);
    static final String COMPONENT = "satoken-agent";
    static final int MAX_MESSAGE = 1024;

    private final ApiClient client;
    private final CoreV1Api api;
    private final String nodeName;
    private final InstantSource clock;
    private final AgentMetrics metrics;
    private final ThreadPoolExecutor sender;
    /** Series by pod uid + reason + message; only touched on the sender thread. */
    private final Cache<String, Series> series = Caffeine.newBuilder()
            .maximumSize(4096).expireAfterWrite(Duration.ofHours(1)).build();

    private static final class Series {
        final String name;
        final String namespace;
        int count = 1;

        Series(String name, String namespace) {
            this.name = name;
            this.namespace = namespace;
        }
    }

    public KubeEventRecorder(ApiClient client, String nodeName, InstantSource clock, AgentMetrics metrics) {
        this.client = client;
        this.api = new CoreV1Api(client);
        this.nodeName = nodeName;
        this.clock = clock;
        this.metrics = metrics;
        this.sender = new ThreadPoolExecutor(1, 1, 0, TimeUnit.SECONDS, new ArrayBlockingQueue<>(1000), r -> {
            Thread t = new Thread(r, "satoken-events");
            t.setDaemon(true);
            return t;
        });
    }

    @Override
    public void warning(V1Pod pod, String reason, String message) {
        String text = message.length() <= MAX_MESSAGE ? message : message.substring(0, MAX_MESSAGE - 3) + "...";
        try {
            sender.execute(() -> send(pod, reason, text));
        } catch (RejectedExecutionException e) {
            metrics.event(false);
            log.debug("event queue full; dropped {} for {}", reason, describe(pod));
        }
    }

    private void send(V1Pod pod, String reason, String message) {
        V1ObjectMeta meta = pod.getMetadata();
        String key = meta.getUid() + "\n" + reason + "\n" + message;
        OffsetDateTime now = OffsetDateTime.ofInstant(clock.instant(), ZoneOffset.UTC);
        Series existing = series.getIfPresent(key);
        try {
            if (existing != null) {
                existing.count++;
                String patch = "{\"count\":" + existing.count + ",\"lastTimestamp\":\"" + now + "\"}";
                PatchUtils.patch(CoreV1Event.class,
                        () -> api.patchNamespacedEvent(existing.name, existing.namespace, new V1Patch(patch)).buildCall(null),
                        V1Patch.PATCH_FORMAT_JSON_MERGE_PATCH, client);
            } else {
                CoreV1Event created = api.createNamespacedEvent(meta.getNamespace(),
                        event(pod, reason, message, now)).execute();
                series.put(key, new Series(created.getMetadata().getName(), meta.getNamespace()));
            }
            metrics.event(true);
        } catch (ApiException e) {
            if (existing != null && e.getCode() == 404) {
                series.invalidate(key); // the event expired on the server; the next one starts a new series
            }
            metrics.event(false);
            log.warn("cannot send event {} for pod {}: HTTP {}", reason, describe(pod), e.getCode());
        } catch (RuntimeException e) {
            metrics.event(false);
            log.warn("cannot send event {} for pod {}: {}", reason, describe(pod), Failures.inWords(e));
        }
    }

    /** A new Event; the API server picks a unique name after the pod's, as it does for kubelet's. */
    private CoreV1Event event(V1Pod pod, String reason, String message, OffsetDateTime now) {
        V1ObjectMeta meta = pod.getMetadata();
        return new CoreV1Event()
                .metadata(new V1ObjectMeta().generateName(meta.getName() + ".").namespace(meta.getNamespace()))
                .involvedObject(new V1ObjectReference().apiVersion("v1").kind("Pod")
                        .namespace(meta.getNamespace()).name(meta.getName()).uid(meta.getUid()))
                .type("Warning")
                .reason(reason)
                .message(message)
                .source(new V1EventSource().component(COMPONENT).host(nodeName))
                .reportingComponent(COMPONENT)
                .reportingInstance(nodeName)
                .firstTimestamp(now)
                .lastTimestamp(now)
                .count(1);
    }

    @Override
    public void close() {
        sender.shutdown();
        try {
            if (!sender.awaitTermination(5, TimeUnit.SECONDS)) {
                sender.shutdownNow();
            }
        } catch (InterruptedException e) {
            sender.shutdownNow();
            Thread.currentThread().interrupt();
        }
    }

    private static String describe(V1Pod pod) {
        return pod.getMetadata() == null ? "?" : pod.getMetadata().getNamespace() + "/" + pod.getMetadata().getName();
    }
}
