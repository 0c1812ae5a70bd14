package io.satoken.controlplane.aggregation;

import static io.satoken.controlplane.controller.Reconciler.Result.DONE;
import static io.satoken.controlplane.controller.Reconciler.Result.RETRY;

import io.kubernetes.client.openapi.ApiException;
import io.kubernetes.client.openapi.models.V1ClusterRole;
import io.kubernetes.client.openapi.models.V1PolicyRule;
import io.satoken.common.kube.Failures;
import io.satoken.controlplane.kube.ApiErrors;
import io.satoken.controlplane.controller.DeepCopy;
import io.satoken.controlplane.controller.Reconciler;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** The aggregation controller's sync (spec 7): an aggregating role's rules are those of the roles it selects. */
final class AggregationSync implements Reconciler<String> {

    private static final Logger log = LoggerFactory.getLogger(AggregationSync.class);

    private final RolesByLabel roles;
    private final AggregateRules aggregateRules;
    private final ClusterRoleWriter api;
    private final AggregationMetrics metrics;

    AggregationSync(RolesByLabel roles, ClusterRoleWriter api, AggregationMetrics metrics) {
        this.roles = roles;
        this.aggregateRules = new AggregateRules(roles);
        this.api = api;
        this.metrics = metrics;
    }

    /**
     * 1. CR-2: a role not in the cache, or without an aggregationRule, is left alone.
     * 2. CR-3: compile every selector; an invalid one means no write at all (upstream fails the whole
     *    sync). Not retried: the outcome depends only on the role's own spec, and changing that queues it.
     * 3. CR-3, CR-4: the de-duplicated rules of the selected roles, selectors in order, roles by name, self
     *    skipped; the first of equal rules is the one kept ({@link AggregateRules}, which also says how
     *    cycles differ).
     * 4. CR-5: equal to the current rules → no call.
     * 5. CR-6: server-side apply; on 415 an update of a copy with the rules replaced (CR-7: nothing else).
     */
    @Override
    public Result reconcile(String name) {
        V1ClusterRole role = roles.get(name); // 1
        if (role == null || role.getAggregationRule() == null) {
            return DONE;
        }
        Map<Rule, V1PolicyRule> aggregate; // 2, 3
        try {
            aggregate = aggregateRules.of(role);
        } catch (InvalidSelectorException e) {
            log.warn("clusterrole {}: not aggregated: {}", name, e.getMessage());
            metrics.invalidSelector();
            return DONE;
        }
        List<Rule> rules = new ArrayList<>(aggregate.keySet());
        if (rules.equals(Rule.of(role.getRules()))) { // 4
            return DONE;
        }
        try { // 5
            try {
                api.apply(name, ClusterRoleApply.json(name, rules));
                metrics.applied();
            } catch (ApiException e) {
                if (!ApiErrors.isUnsupportedMediaType(e)) {
                    throw e;
                }
                V1ClusterRole copy = DeepCopy.of(role);
                copy.setRules(aggregate.isEmpty() ? null
                        : aggregate.values().stream().map(AggregationSync::copy).toList());
                api.update(copy);
                metrics.updated();
            }
            log.info("clusterrole {}: set {} aggregated rules", name, rules.size());
            return DONE;
        } catch (ApiException e) {
            log.warn("clusterrole {}: writing aggregated rules: {}", name, Failures.said(e));
            return RETRY;
        }
    }

    /** A copy that keeps null lists null (a JSON round trip would make them empty). */
    private static V1PolicyRule copy(V1PolicyRule rule) {
        return new V1PolicyRule().verbs(copy(rule.getVerbs())).apiGroups(copy(rule.getApiGroups()))
                .resources(copy(rule.getResources())).resourceNames(copy(rule.getResourceNames()))
                .nonResourceURLs(copy(rule.getNonResourceURLs()));
    }

    private static List<String> copy(List<String> list) {
        return list == null ? null : new ArrayList<>(list);
    }
}
