package io.satoken.e2e.node;

import io.kubernetes.client.openapi.ApiClient;
import io.kubernetes.client.openapi.ApiException;
import io.kubernetes.client.openapi.apis.CoreV1Api;
import io.kubernetes.client.openapi.models.CoreV1Event;
import io.kubernetes.client.openapi.models.V1DeleteOptions;
import io.kubernetes.client.openapi.models.V1Pod;
import java.io.IOException;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.stream.Collectors;

/**
 * The pods of one node, through the API as the admin: created bound to the node (there is no scheduler),
 * awaited until Running, and deleted when the node closes. Remembers every pod uid it saw, for
 * {@link HostLeftovers} to find their logs.
 */
final class PodsOnNode {

    private static final Duration POLL = Duration.ofMillis(50);

    private final CoreV1Api core;
    private final String nodeName;
    private final Kubelet kubelet;
    private final Set<String> uids = ConcurrentHashMap.newKeySet();

    PodsOnNode(ApiClient admin, String nodeName, Kubelet kubelet) {
        this.core = new CoreV1Api(admin);
        this.nodeName = nodeName;
        this.kubelet = kubelet;
    }

    RunningPod run(String namespace, V1Pod pod, Duration timeout) throws ApiException, IOException {
        if (pod.getSpec().getNodeName() == null) {
            pod.getSpec().setNodeName(nodeName);
        }
        pod.getSpec().setOverhead(null); // client-java sends "overhead": {} otherwise, which the server refuses
        V1Pod created = core.createNamespacedPod(namespace, pod).execute();
        uids.add(created.getMetadata().getUid());
        long start = System.nanoTime();
        V1Pod running = awaitRunning(namespace, created.getMetadata().getName(), timeout);
        return new RunningPod(running, Duration.ofNanos(System.nanoTime() - start));
    }

    V1Pod awaitRunning(String namespace, String name, Duration timeout) throws ApiException, IOException {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (true) {
            V1Pod pod = core.readNamespacedPod(name, namespace).execute();
            String phase = pod.getStatus() == null ? null : pod.getStatus().getPhase();
            if ("Running".equals(phase)) {
                return pod;
            }
            boolean ended = "Succeeded".equals(phase) || "Failed".equals(phase);
            boolean kubeletAlive = kubelet.process().isAlive();
            if (ended || !kubeletAlive || System.nanoTime() > deadline) {
                throw new IOException("pod " + namespace + "/" + name + " not Running (phase " + phase + ", kubelet "
                        + (kubeletAlive ? "running" : "exited") + ", waited at most " + timeout.toSeconds() + " s)"
                        + "\nstatus: " + pod.getStatus() + "\nevents:\n" + events(namespace, name) + kubelet.tail());
            }
            NodeProcess.sleep(POLL);
        }
    }

    /**
     * Deletes every pod bound to the node (grace 1 s: busybox as PID 1 ignores SIGTERM) and waits until the
     * kubelet has confirmed each deletion, which it does once the pod's containers are stopped and its
     * volumes unmounted. Nothing to do when the kubelet is not running: the containers then go with their
     * shims ({@link Containerd#killShims}).
     */
    void deleteAll(Duration timeout) throws ApiException, IOException {
        if (kubelet.process() == null || !kubelet.process().isAlive()) {
            return;
        }
        List<V1Pod> pods;
        try {
            pods = onNode();
        } catch (ApiException e) {
            if (e.getCode() == 0) { // no answer: in a shutdown hook, the API server's own hook may have run first
                System.err.println("node: API server unreachable; the pods' containers go with their shims");
                return;
            }
            throw e;
        }
        for (V1Pod pod : pods) {
            uids.add(pod.getMetadata().getUid());
            try {
                core.deleteNamespacedPod(pod.getMetadata().getName(), pod.getMetadata().getNamespace())
                        .body(new V1DeleteOptions().gracePeriodSeconds(1L)).execute();
            } catch (ApiException e) {
                if (e.getCode() != 404) {
                    throw e;
                }
            }
        }
        long deadline = System.nanoTime() + timeout.toNanos();
        List<V1Pod> left;
        while (!(left = onNode()).isEmpty()) {
            if (System.nanoTime() > deadline) {
                throw new IOException(left.size() + " pod(s) still on the node " + timeout.toSeconds()
                        + " s after their deletion: " + left.stream().map(p -> p.getMetadata().getName()).toList());
            }
            NodeProcess.sleep(POLL);
        }
    }

    /** Every pod uid seen on the node. */
    Set<String> uids() {
        return Set.copyOf(uids);
    }

    private List<V1Pod> onNode() throws ApiException {
        return core.listPodForAllNamespaces().fieldSelector("spec.nodeName=" + nodeName).execute().getItems();
    }

    private String events(String namespace, String pod) {
        try {
            List<CoreV1Event> events = core.listNamespacedEvent(namespace)
                    .fieldSelector("involvedObject.name=" + pod).execute().getItems();
            return events.stream().map(e -> "  " + e.getType() + " " + e.getReason() + ": " + e.getMessage() + "\n")
                    .collect(Collectors.joining());
        } catch (ApiException e) {
            return "  (events unreadable: HTTP " + e.getCode() + ")\n";
        }
    }
}
