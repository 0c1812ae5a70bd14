package io.satoken.controlplane.aggregation;

import io.kubernetes.client.openapi.models.V1ClusterRole;
import io.kubernetes.client.openapi.models.V1PolicyRule;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.Deque;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Computes an aggregating role's rules from the cache (CR-3, CR-4): for each selector in order, the matched
 * roles by name, the role itself skipped, each rule appended unless an equal one is there already (the
 * first is kept).
 *
 * <p>One departure, for cycles only. Upstream reads every matched role's stored rules, including those
 * of an aggregating role that in turn selects this one; around such a cycle each role's output is another's
 * input, and that has no guaranteed end: three roles in a ring whose rules are in different orders hand the
 * orders round forever, one write after another (AggregationConvergenceTest pins this). So a matched role
 * on the same cycle as the synced role contributes not its stored rules, which are this very computation's
 * output, but what it would aggregate itself, walked in turn (each cycle member once). Every member then
 * depends only on roles outside the cycle: it ends with their rules (the least fixed point, so a rule whose
 * source left the cycle's inputs goes too), after one write per change. Without a cycle, which is every
 * chain, the result is upstream's exactly.
 */
final class AggregateRules {

    private static final Comparator<V1ClusterRole> BY_NAME = Comparator.comparing(AggregateRules::name);

    private final RolesByLabel roles;

    AggregateRules(RolesByLabel roles) {
        this.roles = roles;
    }

    /**
     * 1. Explore: the aggregating roles reachable from the synced one through selectors, with each one's
     *    matches per selector (sorted by name, itself left out). A reached role whose rule is invalid is a
     *    plain input: its rules never change through us.
     * 2. Cycle: the reached roles from which the synced role is reachable again. Usually none.
     * 3. Walk: matches outside the cycle give their rules; matches on it are walked instead.
     *
     * @return each distinct rule ({@link Rule} equality) with the first PolicyRule that carried it, in order
     * @throws InvalidSelectorException when the synced role's own aggregationRule is invalid
     */
    Map<Rule, V1PolicyRule> of(V1ClusterRole role) throws InvalidSelectorException {
        String self = name(role);
        Map<String, List<List<V1ClusterRole>>> matches = new HashMap<>(); // 1
        matches.put(self, matches(role, Selector.compileAll(role.getAggregationRule())));
        Set<String> invalid = new HashSet<>();
        Deque<String> todo = new ArrayDeque<>(List.of(self));
        while (!todo.isEmpty()) {
            for (List<V1ClusterRole> matched : matches.get(todo.pop())) {
                for (V1ClusterRole other : matched) {
                    String name = name(other);
                    if (other.getAggregationRule() == null || matches.containsKey(name) || invalid.contains(name)) {
                        continue;
                    }
                    try {
                        matches.put(name, matches(other, Selector.compileAll(other.getAggregationRule())));
                        todo.push(name);
                    } catch (InvalidSelectorException e) {
                        invalid.add(name);
                    }
                }
            }
        }
        Set<String> cycle = matches.size() == 1 ? Set.of(self) : cycle(self, matches); // 2
        Map<Rule, V1PolicyRule> aggregate = new LinkedHashMap<>(); // 3
        walk(self, matches, cycle, new HashSet<>(Set.of(self)), aggregate);
        return aggregate;
    }

    private List<List<V1ClusterRole>> matches(V1ClusterRole role, List<Selector> selectors) {
        String self = name(role);
        List<List<V1ClusterRole>> matches = new ArrayList<>(selectors.size());
        for (Selector selector : selectors) {
            List<V1ClusterRole> matched = roles.matching(selector);
            matched.removeIf(r -> name(r).equals(self));
            matched.sort(BY_NAME);
            matches.add(matched);
        }
        return matches;
    }

    /** {@code self} and the explored roles from which it can be reached. */
    private static Set<String> cycle(String self, Map<String, List<List<V1ClusterRole>>> matches) {
        Map<String, Set<String>> selectedBy = new HashMap<>();
        matches.forEach((name, lists) -> lists.forEach(matched -> matched.forEach(other -> {
            if (matches.containsKey(name(other))) {
                selectedBy.computeIfAbsent(name(other), k -> new HashSet<>()).add(name);
            }
        })));
        Set<String> cycle = new HashSet<>(Set.of(self));
        Deque<String> todo = new ArrayDeque<>(List.of(self));
        while (!todo.isEmpty()) {
            for (String selector : selectedBy.getOrDefault(todo.pop(), Set.of())) {
                if (cycle.add(selector)) {
                    todo.push(selector);
                }
            }
        }
        return cycle;
    }

    private static void walk(String name, Map<String, List<List<V1ClusterRole>>> matches, Set<String> cycle,
            Set<String> walked, Map<Rule, V1PolicyRule> aggregate) {
        for (List<V1ClusterRole> matched : matches.get(name)) {
            for (V1ClusterRole other : matched) {
                String otherName = name(other);
                if (cycle.contains(otherName)) {
                    if (walked.add(otherName)) {
                        walk(otherName, matches, cycle, walked, aggregate);
                    }
                } else if (other.getRules() != null) {
                    for (V1PolicyRule rule : other.getRules()) {
                        aggregate.putIfAbsent(Rule.of(rule), rule);
                    }
                }
            }
        }
    }

    private static String name(V1ClusterRole role) {
        return role.getMetadata().getName();
    }
}
