package io.satoken.controlplane.aggregation;

import io.kubernetes.client.informer.SharedIndexInformer;
import io.kubernetes.client.openapi.ApiClient;
import io.kubernetes.client.openapi.models.V1ClusterRole;
import io.satoken.controlplane.controller.ControllerLoop;
import io.satoken.controlplane.controller.ControllerMetrics;
import io.satoken.controlplane.controller.EventHandlers;
import io.satoken.controlplane.kube.Informers;
import io.satoken.controlplane.controller.LoopController;
import java.util.Set;

/**
 * The ClusterRole aggregation controller ({@code aggregation}, spec 7): every ClusterRole with an
 * aggregationRule gets the rules of the ClusterRoles its selectors match, as upstream computes them, but a
 * ClusterRole event queues only the aggregating roles it can affect ({@link AggregationTriggers}) instead
 * of all of them.
 *
 * <p>Chains (an aggregate selected by another aggregate) converge: a write changes the written role's
 * rules, which queues the roles selecting it. Cycles converge too, to a fixed point: a sync that computes
 * the rules a role already has writes nothing (CR-5), so it causes no event, and around a cycle each role
 * ends up with the same ordered union, after which every sync computes what is there.
 *
 * <p>Build it before the informers start: it adds label indexes to the ClusterRole informer.
 */
public final class AggregationController extends LoopController {

    public static final String NAME = "aggregation";

    private final ControllerLoop<String> loop;

    public AggregationController(Informers informers, ApiClient client, int workers, ControllerMetrics metrics) {
        super(NAME);
        SharedIndexInformer<V1ClusterRole> informer = informers.clusterRoles();
        informer.addIndexers(RolesByLabel.indexers());
        AggregationMetrics aggregationMetrics = new AggregationMetrics(metrics.registry());
        AggregationSync sync = new AggregationSync(new RolesByLabel(informer.getIndexer()),
                new ApiClusterRoleWriter(client), aggregationMetrics);
        this.loop = addLoop(NAME, sync, workers, ControllerLoop.UNLIMITED_RETRIES, metrics);
        AggregationTriggers triggers = new AggregationTriggers();
        aggregationMetrics.aggregatingRoles(triggers::aggregatingRoles);
        informer.addEventHandler(EventHandlers.of(
                role -> enqueue(triggers.added(role), aggregationMetrics),
                (before, after) -> enqueue(triggers.updated(before, after), aggregationMetrics),
                role -> enqueue(triggers.deleted(role), aggregationMetrics)));
    }

    private void enqueue(Set<String> roles, AggregationMetrics metrics) {
        roles.forEach(loop::enqueue);
        metrics.queued(roles.size());
    }
}
