package io.satoken.e2e;

import io.kubernetes.client.openapi.ApiClient;
import io.kubernetes.client.openapi.ApiException;
import io.kubernetes.client.openapi.apis.CoreV1Api;
import io.kubernetes.client.openapi.models.V1Container;
import io.kubernetes.client.openapi.models.V1ObjectMeta;
import io.kubernetes.client.openapi.models.V1Pod;
import io.kubernetes.client.openapi.models.V1PodSpec;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Pods bound to a node the way the scheduler would leave them ({@code spec.nodeName} set at create; no
 * kubelet runs, so they stay Pending, which the agent serves), created concurrently. A create the API
 * server answers with 429 (its in-flight limit) is retried after a short pause, as a controller would.
 */
final class NodePods {

    static final String ANNOTATION = "satoken.io/projections";

    private final ApiClient client;
    private final String namespace;
    private final String node;
    private final String serviceAccount;
    private final AtomicInteger throttled = new AtomicInteger();

    NodePods(ApiClient client, String namespace, String node, String serviceAccount) {
        this.client = client;
        this.namespace = namespace;
        this.node = node;
        this.serviceAccount = serviceAccount;
    }

    /** Creates one pod with the given annotation value (null: no annotation); returns it as created. */
    V1Pod create(String name, String projections) throws ApiException {
        V1ObjectMeta meta = new V1ObjectMeta().name(name);
        if (projections != null) {
            meta.annotations(Map.of(ANNOTATION, projections));
        }
        V1Pod pod = new V1Pod().metadata(meta)
                // client-java sends "overhead": {} unless told not to; the API server refuses it
                .spec(new V1PodSpec().overhead(null).nodeName(node).serviceAccountName(serviceAccount)
                        .addContainersItem(new V1Container().name("app").image("busybox")));
        while (true) {
            try {
                return new CoreV1Api(client).createNamespacedPod(namespace, pod).execute();
            } catch (ApiException e) {
                if (e.getCode() != 429) {
                    throw e;
                }
                throttled.incrementAndGet();
                SatokenProcess.pause(Duration.ofMillis(200));
            }
        }
    }

    /** Creates {@code count} pods {@code prefix-00000}... with {@code threads} threads; returns their uids. */
    List<String> createMany(String prefix, int count, String projections, int threads) throws Exception {
        ExecutorService pool = Executors.newFixedThreadPool(threads);
        try {
            List<Future<V1Pod>> futures = new ArrayList<>(count);
            for (int i = 0; i < count; i++) {
                String name = String.format("%s-%05d", prefix, i);
                futures.add(pool.submit(() -> create(name, projections)));
            }
            List<String> uids = new ArrayList<>(count);
            for (Future<V1Pod> f : futures) {
                uids.add(f.get().getMetadata().getUid());
            }
            return uids;
        } finally {
            pool.shutdownNow();
        }
    }

    /** How many creates the API server refused with 429 so far (each was retried). */
    int throttledCreates() {
        return throttled.get();
    }

    /** How many of the pods have their file {@code path} under {@code <rootDir>/pods/<uid>/}. */
    static int withFile(Path rootDir, List<String> uids, String path) {
        int n = 0;
        for (String uid : uids) {
            if (Files.exists(rootDir.resolve("pods").resolve(uid).resolve(path))) {
                n++;
            }
        }
        return n;
    }
}
