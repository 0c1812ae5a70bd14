package io.satoken.controlplane.aggregation;

import io.kubernetes.client.informer.cache.Cache;
import io.kubernetes.client.openapi.JSON;
import io.kubernetes.client.openapi.models.V1ClusterRole;
import io.kubernetes.client.openapi.models.V1ObjectMeta;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.satoken.controlplane.controller.DeepCopy;
import io.satoken.controlplane.controller.Reconciler.Result;
import java.util.Iterator;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;

/**
 * ClusterRoles in memory, driven the way the controller drives them, without threads or an API server: a
 * change updates the cache and hands the event to {@link AggregationTriggers}, whose roles join a FIFO
 * queue that drops duplicates (as the work queue does); {@link #runUntilQuiet} syncs one key at a time,
 * and an apply writes the rules back into the cache, which is a change like any other.
 *
 * <p>With {@code queueAll}, every event queues every aggregating role instead: upstream's CR-1, the
 * reference the selective triggers must agree with.
 */
final class InMemoryCluster {

    private final boolean queueAll;
    private final Cache<V1ClusterRole> cache = Roles.cache(List.of());
    private final AggregationTriggers triggers = new AggregationTriggers();
    private final Set<String> queue = new LinkedHashSet<>();
    private final AggregationSync sync;
    private int writes;
    private int resourceVersion;

    InMemoryCluster(boolean queueAll) {
        this.queueAll = queueAll;
        ClusterRoleWriter writer = new ClusterRoleWriter() {
            @Override
            public void apply(String name, String body) {
                writes++;
                V1ClusterRole applied = new JSON().deserialize(body, V1ClusterRole.class);
                V1ClusterRole current = cache.getByKey(name);
                V1ClusterRole next = current == null
                        ? new V1ClusterRole().metadata(new V1ObjectMeta().name(name)) // apply creates
                        : DeepCopy.of(current);
                put(next.rules(applied.getRules()));
            }

            @Override
            public void update(V1ClusterRole role) {
                throw new UnsupportedOperationException("the in-memory cluster takes applies");
            }
        };
        this.sync = new AggregationSync(new RolesByLabel(cache), writer, new AggregationMetrics(new SimpleMeterRegistry()));
    }

    /** Creates or replaces a role, as a user would. */
    void put(V1ClusterRole role) {
        V1ClusterRole stored = DeepCopy.of(role);
        stored.getMetadata().setResourceVersion(Integer.toString(++resourceVersion));
        V1ClusterRole before = cache.getByKey(stored.getMetadata().getName());
        if (before == null) {
            cache.add(stored);
            queue(triggers.added(stored));
        } else {
            cache.update(stored);
            queue(triggers.updated(before, stored));
        }
    }

    void delete(String name) {
        V1ClusterRole before = cache.getByKey(name);
        if (before != null) {
            cache.delete(before);
            queue(triggers.deleted(before));
        }
    }

    V1ClusterRole get(String name) {
        return cache.getByKey(name);
    }

    List<V1ClusterRole> roles() {
        return cache.list();
    }

    /** Role writes (applies) so far. */
    int writes() {
        return writes;
    }

    /** Queues every aggregating role, as a full resync would. */
    void queueEveryAggregatingRole() {
        cache.list().stream().filter(r -> r.getAggregationRule() != null)
                .forEach(r -> queue.add(r.getMetadata().getName()));
    }

    /**
     * Syncs queued roles until none is left and returns how many syncs it took.
     *
     * @throws AssertionError after {@code maxSyncs} syncs: the roles are not converging
     */
    int runUntilQuiet(int maxSyncs) {
        int syncs = 0;
        while (!queue.isEmpty()) {
            if (syncs == maxSyncs) {
                throw new AssertionError("still busy after " + maxSyncs + " syncs, queue " + queue);
            }
            Iterator<String> first = queue.iterator();
            String name = first.next();
            first.remove();
            if (sync.reconcile(name) != Result.DONE) {
                throw new AssertionError("sync of " + name + " failed");
            }
            syncs++;
        }
        return syncs;
    }

    private void queue(Set<String> roles) {
        if (queueAll) {
            queueEveryAggregatingRole();
        } else {
            queue.addAll(roles);
        }
    }
}
