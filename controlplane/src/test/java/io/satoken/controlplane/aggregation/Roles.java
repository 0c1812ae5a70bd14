package io.satoken.controlplane.aggregation;

import io.kubernetes.client.informer.cache.Cache;
import io.kubernetes.client.openapi.models.V1AggregationRule;
import io.kubernetes.client.openapi.models.V1ClusterRole;
import io.kubernetes.client.openapi.models.V1LabelSelector;
import io.kubernetes.client.openapi.models.V1LabelSelectorRequirement;
import io.kubernetes.client.openapi.models.V1ObjectMeta;
import io.kubernetes.client.openapi.models.V1PolicyRule;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/** ClusterRoles, rules and selectors for the aggregation tests; the rules are those of upstream's table. */
final class Roles {

    private Roles() {
    }

    static V1PolicyRule rule(String verb, String resource) {
        return new V1PolicyRule().verbs(new ArrayList<>(List.of(verb))).resources(new ArrayList<>(List.of(resource)));
    }

    static List<V1PolicyRule> hammerRules() {
        return List.of(rule("hammer", "nails"), rule("hammer", "wedges"));
    }

    static List<V1PolicyRule> chiselRules() {
        return List.of(rule("chisel", "mortises"));
    }

    static List<V1PolicyRule> sawRules() {
        return List.of(rule("saw", "boards"));
    }

    @SafeVarargs
    static List<V1PolicyRule> concat(List<V1PolicyRule>... lists) {
        return Arrays.stream(lists).flatMap(List::stream).toList();
    }

    /** A role without an aggregationRule. */
    static V1ClusterRole role(String name, Map<String, String> labels, List<V1PolicyRule> rules) {
        return new V1ClusterRole()
                .metadata(new V1ObjectMeta().name(name).labels(labels == null ? null : new HashMap<>(labels))
                        .resourceVersion("1"))
                .rules(new ArrayList<>(rules));
    }

    static V1ClusterRole aggregating(String name, List<V1LabelSelector> selectors, List<V1PolicyRule> rules) {
        return role(name, null, rules).aggregationRule(new V1AggregationRule().clusterRoleSelectors(selectors));
    }

    static V1ClusterRole aggregating(String name, Map<String, String> labels, List<V1LabelSelector> selectors,
            List<V1PolicyRule> rules) {
        return role(name, labels, rules).aggregationRule(new V1AggregationRule().clusterRoleSelectors(selectors));
    }

    static V1LabelSelector matchLabels(String key, String value) {
        return new V1LabelSelector().matchLabels(new HashMap<>(Map.of(key, value)));
    }

    static V1LabelSelector expression(String key, String operator, String... values) {
        return new V1LabelSelector().addMatchExpressionsItem(requirement(key, operator, values));
    }

    static V1LabelSelectorRequirement requirement(String key, String operator, String... values) {
        return new V1LabelSelectorRequirement().key(key).operator(operator)
                .values(values.length == 0 ? null : new ArrayList<>(List.of(values)));
    }

    /** A cache with the label indexes the controller adds to the informer, holding {@code roles}. */
    static Cache<V1ClusterRole> cache(List<V1ClusterRole> roles) {
        Cache<V1ClusterRole> cache = new Cache<>();
        cache.addIndexers(RolesByLabel.indexers());
        roles.forEach(cache::add);
        return cache;
    }
}
