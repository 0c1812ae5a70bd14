package io.satoken.controlplane.aggregation;

import io.kubernetes.client.informer.cache.Indexer;
import io.kubernetes.client.openapi.models.V1ClusterRole;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.function.Function;

/**
 * The ClusterRole cache seen through two label indexes, so the roles a selector matches are found among
 * the roles carrying its {@link Selector#indexable() indexable} label rather than among all of them
 * (upstream's lister tests every role against every selector).
 */
final class RolesByLabel {

    /** Index of {@code key=value} for every label; a key or value never holds '='. */
    static final String LABEL_INDEX = "satoken.io/aggregation-label";
    /** Index of every label key. */
    static final String LABEL_KEY_INDEX = "satoken.io/aggregation-label-key";

    private final Indexer<V1ClusterRole> cache;

    /** @param cache a cache that has {@link #indexers()} */
    RolesByLabel(Indexer<V1ClusterRole> cache) {
        if (!cache.getIndexers().keySet().containsAll(indexers().keySet())) {
            throw new IllegalArgumentException("the ClusterRole cache lacks the indexes " + indexers().keySet());
        }
        this.cache = cache;
    }

    /** The index functions to add to the ClusterRole informer before it starts. */
    static Map<String, Function<V1ClusterRole, List<String>>> indexers() {
        return Map.of(
                LABEL_INDEX, role -> labels(role).entrySet().stream().map(e -> pair(e.getKey(), e.getValue())).toList(),
                LABEL_KEY_INDEX, role -> List.copyOf(labels(role).keySet()));
    }

    static String pair(String key, String value) {
        return key + "=" + value;
    }

    static Map<String, String> labels(V1ClusterRole role) {
        Map<String, String> labels = role.getMetadata() == null ? null : role.getMetadata().getLabels();
        return labels == null ? Map.of() : labels;
    }

    /** The cached role named {@code name}, or null. */
    V1ClusterRole get(String name) {
        return cache.getByKey(name);
    }

    /** The cached roles {@code selector} matches, in no particular order. */
    List<V1ClusterRole> matching(Selector selector) {
        List<V1ClusterRole> candidates = selector.indexable()
                .map(r -> switch (r.operator()) {
                    case IN -> {
                        List<V1ClusterRole> in = new ArrayList<>();
                        // a role has one value per key, so the lists of different values never overlap
                        r.values().forEach(v -> in.addAll(cache.byIndex(LABEL_INDEX, pair(r.key(), v))));
                        yield in;
                    }
                    case EXISTS -> cache.byIndex(LABEL_KEY_INDEX, r.key());
                    default -> throw new IllegalStateException("not indexable: " + r);
                })
                .orElseGet(cache::list);
        List<V1ClusterRole> matched = new ArrayList<>(candidates.size());
        for (V1ClusterRole role : candidates) {
            if (selector.matches(labels(role))) {
                matched.add(role);
            }
        }
        return matched;
    }
}
