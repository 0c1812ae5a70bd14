package io.satoken.e2e;

import io.satoken.agent.testing.KubeletCsiClient;
import io.kubernetes.client.openapi.ApiClient;
import io.kubernetes.client.openapi.ApiException;
import io.kubernetes.client.openapi.apis.CoreV1Api;
import io.kubernetes.client.openapi.models.V1Container;
import io.kubernetes.client.openapi.models.V1ObjectMeta;
import io.kubernetes.client.openapi.models.V1Pod;
import io.kubernetes.client.openapi.models.V1PodSpec;
import io.kubernetes.client.openapi.models.V1Volume;
import io.kubernetes.client.openapi.models.V1VolumeMount;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;

/**
 * Pods bound to a node the way the scheduler would leave them ({@code spec.nodeName} set at create; no
 * kubelet runs, so they stay Pending), each with one CSI inline volume of the agent's driver that the test,
 * acting as the node's kubelet ({@link KubeletCsiClient}), publishes; created concurrently. A create the API
 * server answers with 429 (its in-flight limit) is retried after a short pause, as a controller would.
 */
final class NodePods {

    /** The name of each pod's token volume. */
    static final String VOLUME = "tokens";

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

    /** Creates one pod whose volume {@value #VOLUME} has these attributes; returns it as created. */
    V1Pod create(String name, Map<String, String> attributes) throws ApiException {
        V1Pod pod = new V1Pod().metadata(new V1ObjectMeta().name(name))
                // client-java sends "overhead": {} unless told not to; the API server refuses it
                .spec(new V1PodSpec().overhead(null).nodeName(node).serviceAccountName(serviceAccount)
                        .addVolumesItem(KubeletCsiClient.volume(VOLUME, attributes))
                        .addContainersItem(new V1Container().name("app").image("busybox")
                                .addVolumeMountsItem(new V1VolumeMount().name(VOLUME)
                                        .mountPath("/var/run/secrets/tokens").readOnly(true))));
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

    /**
     * Creates {@code count} pods {@code prefix-00000}... with {@code threads} threads, handing each to
     * {@code created} as soon as it exists (as the API server's watch hands it to the node's kubelet);
     * returns them in order.
     */
    List<V1Pod> createMany(String prefix, int count, Map<String, String> attributes, int threads,
            Consumer<V1Pod> created) throws Exception {
        ExecutorService pool = Executors.newFixedThreadPool(threads);
        try {
            List<Future<V1Pod>> futures = new ArrayList<>(count);
            for (int i = 0; i < count; i++) {
                String name = String.format("%s-%05d", prefix, i);
                futures.add(pool.submit(() -> {
                    V1Pod pod = create(name, attributes);
                    created.accept(pod);
                    return pod;
                }));
            }
            List<V1Pod> pods = new ArrayList<>(count);
            for (Future<V1Pod> f : futures) {
                pods.add(f.get());
            }
            return pods;
        } finally {
            pool.shutdownNow();
        }
    }

    /** How many creates the API server refused with 429 so far (each was retried). */
    int throttledCreates() {
        return throttled.get();
    }

    /** The pod's token volume, as its spec holds it: what the kubelet publishes. */
    static V1Volume volume(V1Pod pod) {
        return pod.getSpec().getVolumes().stream().filter(v -> VOLUME.equals(v.getName())).findFirst().orElseThrow();
    }
}
