package io.satoken.controlplane.aggregation;

import io.kubernetes.client.openapi.models.V1PolicyRule;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;

/**
 * A PolicyRule as upstream compares rules (CR-4): the five lists, each compared in order, with null and
 * empty counting as equal. No normalisation beyond that: {@code [get, list]} and {@code [list, get]} differ,
 * and {@code {get pods}} and {@code {list pods}} stay two rules. Its {@code equals} is that comparison, so
 * de-duplicating a list of rules is a hash lookup rather than upstream's pairwise scan.
 */
record Rule(List<String> verbs, List<String> apiGroups, List<String> resources, List<String> resourceNames,
        List<String> nonResourceURLs) {

    Rule {
        verbs = copy(verbs);
        apiGroups = copy(apiGroups);
        resources = copy(resources);
        resourceNames = copy(resourceNames);
        nonResourceURLs = copy(nonResourceURLs);
    }

    static Rule of(V1PolicyRule rule) {
        return new Rule(rule.getVerbs(), rule.getApiGroups(), rule.getResources(), rule.getResourceNames(),
                rule.getNonResourceURLs());
    }

    /** The rules of {@code rules} ({@code null} counts as none), in order. */
    static List<Rule> of(List<V1PolicyRule> rules) {
        return rules == null ? List.of() : rules.stream().map(Rule::of).toList();
    }

    private static List<String> copy(List<String> list) {
        // List.copyOf rejects null elements; a rule never holds one, but a hand-made object might
        return list == null ? List.of() : Collections.unmodifiableList(new ArrayList<>(list));
    }
}
