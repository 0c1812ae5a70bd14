package io.satoken.controlplane.aggregation;

import io.kubernetes.client.openapi.models.V1ClusterRole;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;

/**
 * Decides which aggregating roles a ClusterRole event queues. Upstream queues every aggregating role on
 * every event (CR-1); an aggregating role's result, though, depends only on its own aggregationRule and on
 * the labels and rules of the roles its selectors match, and, through those, on what they select. So an
 * event queues:
 * <ul>
 * <li>the aggregating roles whose selectors match the changed role's labels before or after the change,
 *     when its labels or rules changed (or it was added or deleted): those are the aggregates it may
 *     join, leave or change;
 * <li>the changed role itself, when it aggregates and its aggregationRule or its rules changed (a new
 *     selector, or someone edited the rules the controller owns);
 * <li>and the aggregating roles selecting any of those, transitively. A chain would get there anyway,
 *     through the writes, but a cycle needs it: a member's result depends on the other members' inputs
 *     ({@link AggregateRules}), even when none of their stored rules changes.
 * </ul>
 * Every other aggregating role would compute what it has already computed. The sync reads the cache,
 * which the informer updates before it hands out the event, so a role queued here sees the change.
 *
 * <p>To find the selecting roles without testing every selector, each valid selector is filed under the
 * label its {@link Selector#indexable()} requirement needs ({@code key=value} for each {@code In} value, or
 * the key of an {@code Exists}); only selectors with nothing but negative requirements are tested for
 * every event. Called from the informer's event thread; synchronized all the same.
 */
final class AggregationTriggers {

    private final Map<String, List<Selector>> selectorsByRole = new HashMap<>();
    private final Map<String, Map<String, String>> labelsByRole = new HashMap<>();
    private final Map<String, Set<String>> byPair = new HashMap<>();
    private final Map<String, Set<String>> byKey = new HashMap<>();
    private final Set<String> unindexed = new HashSet<>();

    synchronized Set<String> added(V1ClusterRole role) {
        String name = role.getMetadata().getName();
        unindex(name); // a re-list may announce a role it has seen as added again
        index(name, role);
        Set<String> queue = selecting(RolesByLabel.labels(role));
        if (role.getAggregationRule() != null) {
            queue.add(name);
        }
        return withSelectors(queue);
    }

    synchronized Set<String> updated(V1ClusterRole before, V1ClusterRole after) {
        String name = after.getMetadata().getName();
        boolean aggregationRuleChanged = !Objects.equals(before.getAggregationRule(), after.getAggregationRule());
        boolean labelsChanged = !RolesByLabel.labels(before).equals(RolesByLabel.labels(after));
        boolean rulesChanged = !Rule.of(before.getRules()).equals(Rule.of(after.getRules()));
        if (aggregationRuleChanged || labelsChanged) {
            unindex(name);
            index(name, after);
        }
        Set<String> queue = new LinkedHashSet<>();
        if (labelsChanged || rulesChanged) {
            queue.addAll(selecting(RolesByLabel.labels(before)));
            queue.addAll(selecting(RolesByLabel.labels(after)));
        }
        if (after.getAggregationRule() != null && (aggregationRuleChanged || rulesChanged)) {
            queue.add(name);
        }
        return withSelectors(queue);
    }

    synchronized Set<String> deleted(V1ClusterRole role) {
        unindex(role.getMetadata().getName());
        return withSelectors(selecting(RolesByLabel.labels(role)));
    }

    /** How many roles have a valid aggregationRule. */
    synchronized int aggregatingRoles() {
        return selectorsByRole.size();
    }

    /** {@code roles} and the aggregating roles that select any of them, transitively. */
    private Set<String> withSelectors(Set<String> roles) {
        Set<String> all = new LinkedHashSet<>(roles);
        Deque<String> todo = new ArrayDeque<>(roles);
        while (!todo.isEmpty()) {
            Map<String, String> labels = labelsByRole.get(todo.pop());
            if (labels != null) {
                for (String selecting : selecting(labels)) {
                    if (all.add(selecting)) {
                        todo.push(selecting);
                    }
                }
            }
        }
        return all;
    }

    /** The aggregating roles with a selector that matches {@code labels}. */
    synchronized Set<String> selecting(Map<String, String> labels) {
        Set<String> candidates = new HashSet<>(unindexed);
        labels.forEach((key, value) -> {
            candidates.addAll(byPair.getOrDefault(RolesByLabel.pair(key, value), Set.of()));
            candidates.addAll(byKey.getOrDefault(key, Set.of()));
        });
        Set<String> selecting = new LinkedHashSet<>();
        for (String candidate : candidates) {
            for (Selector selector : selectorsByRole.get(candidate)) {
                if (selector.matches(labels)) {
                    selecting.add(candidate);
                    break;
                }
            }
        }
        return selecting;
    }

    /**
     * Files an aggregating role's selectors. A role whose rule is invalid is not filed: its sync writes
     * nothing whatever the other roles do, and its own next change is queued all the same.
     */
    private void index(String name, V1ClusterRole role) {
        if (role.getAggregationRule() == null) {
            return;
        }
        List<Selector> selectors;
        try {
            selectors = Selector.compileAll(role.getAggregationRule());
        } catch (InvalidSelectorException e) {
            return; // the sync logs it, with the role's name
        }
        selectorsByRole.put(name, selectors);
        labelsByRole.put(name, new HashMap<>(RolesByLabel.labels(role)));
        selectors.forEach(selector -> file(name, selector, true));
    }

    private void unindex(String name) {
        List<Selector> selectors = selectorsByRole.remove(name);
        labelsByRole.remove(name);
        if (selectors != null) {
            selectors.forEach(selector -> file(name, selector, false));
        }
    }

    /** Files {@code name} under each {@code key=value} an In needs, or the key an Exists needs, or everywhere. */
    private void file(String name, Selector selector, boolean add) {
        selector.indexable().ifPresentOrElse(r -> {
            switch (r.operator()) {
                case IN -> r.values().forEach(v -> change(byPair, RolesByLabel.pair(r.key(), v), name, add));
                case EXISTS -> change(byKey, r.key(), name, add);
                default -> throw new IllegalStateException("not indexable: " + r);
            }
        }, () -> change(unindexed, name, add));
    }

    private static void change(Map<String, Set<String>> postings, String posting, String name, boolean add) {
        if (add) {
            postings.computeIfAbsent(posting, k -> new HashSet<>()).add(name);
            return;
        }
        Set<String> names = postings.get(posting);
        if (names != null) {
            change(names, name, false);
            if (names.isEmpty()) {
                postings.remove(posting);
            }
        }
    }

    private static void change(Set<String> names, String name, boolean add) {
        if (add) {
            names.add(name);
        } else {
            names.remove(name);
        }
    }
}
