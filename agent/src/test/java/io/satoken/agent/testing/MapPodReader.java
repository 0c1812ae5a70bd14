package io.satoken.agent.testing;

import io.kubernetes.client.openapi.models.V1Pod;
import io.satoken.agent.csi.PodReader;
import java.io.IOException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/** A {@link PodReader} over a map of pods by {@code namespace/name}; it records every read. */
public final class MapPodReader implements PodReader {

    private final Map<String, V1Pod> pods = new HashMap<>();
    private final List<String> reads = new ArrayList<>();
    private IOException failure;

    /** Adds or replaces a pod, by its metadata's namespace and name. */
    public synchronized MapPodReader put(V1Pod pod) {
        pods.put(pod.getMetadata().getNamespace() + "/" + pod.getMetadata().getName(), pod);
        return this;
    }

    public synchronized void remove(String namespace, String name) {
        pods.remove(namespace + "/" + name);
    }

    /** Every read fails with {@code error} until {@link #recover()}. */
    public synchronized void failWith(IOException error) {
        failure = error;
    }

    public synchronized void recover() {
        failure = null;
    }

    @Override
    public synchronized V1Pod read(String namespace, String name) throws IOException {
        reads.add(namespace + "/" + name);
        if (failure != null) {
            throw failure;
        }
        return pods.get(namespace + "/" + name);
    }

    /** The pods read, as {@code namespace/name}, in order. */
    public synchronized List<String> reads() {
        return List.copyOf(reads);
    }
}
