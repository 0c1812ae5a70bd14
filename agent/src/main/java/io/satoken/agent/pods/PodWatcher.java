package io.satoken.agent.pods;

import io.kubernetes.client.informer.ResourceEventHandler;
import io.kubernetes.client.informer.SharedIndexInformer;
import io.kubernetes.client.informer.SharedInformerFactory;
import io.kubernetes.client.openapi.ApiClient;
import io.kubernetes.client.openapi.apis.CoreV1Api;
import io.kubernetes.client.openapi.models.V1Pod;
import io.kubernetes.client.openapi.models.V1PodList;
import java.io.IOException;
import java.time.Duration;
import java.util.Set;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.stream.Collectors;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Watches the pods bound to one node (field selector {@code spec.nodeName=<node>}, so an agent's share
 * of the API server's work does not grow with the cluster) and feeds them to {@link PodTokens}. Once the
 * informer has listed every pod, the directories of pods that no longer exist are removed and the
 * watcher reports itself ready.
 */
public final class PodWatcher implements AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(PodWatcher.class);

    private final SharedInformerFactory factory;
    private final SharedIndexInformer<V1Pod> informer;
    private final PodTokens pods;
    private final AtomicBoolean ready = new AtomicBoolean();
    private Thread syncWaiter;

    /**
     * @param client a client whose read timeout is off: a watch is a long-lived request
     */
    public PodWatcher(ApiClient client, String nodeName, PodTokens pods) {
        this.pods = pods;
        this.factory = new SharedInformerFactory(client);
        CoreV1Api api = new CoreV1Api(client);
        String selector = "spec.nodeName=" + nodeName;
        this.informer = factory.sharedIndexInformerFor(
                params -> api.listPodForAllNamespaces()
                        .fieldSelector(selector)
                        .resourceVersion(params.resourceVersion)
                        .timeoutSeconds(params.timeoutSeconds)
                        .watch(params.watch)
                        // no bookmarks: client-java 25 fails to parse a bookmark's empty pod
                        // (kubernetes-client/java#3439), which broke the watch and re-listed every pod
                        .buildCall(null),
                V1Pod.class, V1PodList.class, 0);
        informer.addEventHandler(new ResourceEventHandler<>() {
            @Override
            public void onAdd(V1Pod pod) {
                handle(() -> pods.apply(pod), pod);
            }

            @Override
            public void onUpdate(V1Pod before, V1Pod after) {
                handle(() -> pods.apply(after), after);
            }

            @Override
            public void onDelete(V1Pod pod, boolean finalStateUnknown) {
                handle(() -> pods.delete(pod), pod);
            }
        });
    }

    /** Starts listing and watching; returns at once. */
    public synchronized void start() {
        factory.startAllRegisteredInformers();
        syncWaiter = new Thread(this::awaitFirstSync, "satoken-pods-sync");
        syncWaiter.setDaemon(true);
        syncWaiter.start();
    }

    /** True once every pod of the first list was handled and orphaned directories were removed. */
    public boolean ready() {
        return ready.get();
    }

    @Override
    public synchronized void close() {
        if (syncWaiter != null) {
            syncWaiter.interrupt();
        }
        factory.stopAllRegisteredInformers();
    }

    private void awaitFirstSync() {
        try {
            while (!informer.hasSynced()) {
                Thread.sleep(Duration.ofMillis(100).toMillis());
            }
            Set<String> live = informer.getIndexer().list().stream()
                    .map(p -> p.getMetadata().getUid())
                    .collect(Collectors.toSet());
            pods.synced(live);
            ready.set(true);
            log.info("pod watcher synced: {} pod(s) on this node, {} with tokens", live.size(), pods.size());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (IOException e) {
            log.error("removing directories of deleted pods failed: {}", e.toString());
            ready.set(true); // tokens are served; a leftover directory is not a reason to stay unready
        }
    }

    private static void handle(Runnable action, V1Pod pod) {
        try {
            action.run();
        } catch (RuntimeException e) {
            // one bad pod must not stop the informer's event thread for all the others
            log.error("handling pod {} failed", pod.getMetadata() == null ? "?" : PodTokens.describe(pod), e);
        }
    }
}
