package io.satoken.controlplane.aggregation;

import io.kubernetes.client.openapi.models.V1AggregationRule;
import io.kubernetes.client.openapi.models.V1LabelSelector;
import io.kubernetes.client.openapi.models.V1LabelSelectorRequirement;
import io.satoken.common.kube.KubeNames;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * A validated label selector: every requirement must hold. Kubernetes' semantics: {@code In} (and a
 * {@code matchLabels} entry, which is {@code In} with one value) needs the key present with one of the
 * values; {@code NotIn} holds when the key is absent or has another value; {@code Exists} and
 * {@code DoesNotExist} test the key alone. A selector with no requirements selects everything.
 *
 * <p>client-java's {@code LabelSelector.parse} matches the same way but checks nothing; an aggregation rule
 * with an unknown operator or a malformed key must be reported, not half-applied, so we compile our own.
 */
record Selector(List<Requirement> requirements) {

    enum Operator {
        IN("In"), NOT_IN("NotIn"), EXISTS("Exists"), DOES_NOT_EXIST("DoesNotExist");

        final String apiName;

        Operator(String apiName) {
            this.apiName = apiName;
        }

        static Optional<Operator> of(String apiName) {
            for (Operator op : values()) {
                if (op.apiName.equals(apiName)) {
                    return Optional.of(op);
                }
            }
            return Optional.empty();
        }
    }

    /** One requirement on one key; {@code values} is empty for {@code Exists} and {@code DoesNotExist}. */
    record Requirement(String key, Operator operator, Set<String> values) {

        Requirement {
            values = Set.copyOf(values);
        }

        boolean matches(Map<String, String> labels) {
            String value = labels.get(key);
            boolean present = value != null || labels.containsKey(key);
            return switch (operator) {
                case IN -> present && values.contains(value);
                case NOT_IN -> !present || !values.contains(value);
                case EXISTS -> present;
                case DOES_NOT_EXIST -> !present;
            };
        }
    }

    /** The selector that selects every label set (an empty {@code LabelSelector}). */
    static final Selector EVERYTHING = new Selector(List.of());

    Selector {
        requirements = List.copyOf(requirements);
    }

    /**
     * Checks and compiles {@code selector}; {@code null} counts as empty, as a zero-valued selector does
     * upstream.
     *
     * @param where the selector's path in its object, for the error message
     * @throws InvalidSelectorException naming the first problem and where it is
     */
    static Selector compile(V1LabelSelector selector, String where) throws InvalidSelectorException {
        if (selector == null) {
            return EVERYTHING;
        }
        List<Requirement> requirements = new ArrayList<>();
        Map<String, String> matchLabels = selector.getMatchLabels() == null ? Map.of() : selector.getMatchLabels();
        for (Map.Entry<String, String> e : matchLabels.entrySet()) {
            String at = where + ".matchLabels[" + e.getKey() + "]";
            checkKey(e.getKey(), at);
            checkValue(e.getValue() == null ? "" : e.getValue(), at);
            requirements.add(new Requirement(e.getKey(), Operator.IN, Set.of(e.getValue() == null ? "" : e.getValue())));
        }
        List<V1LabelSelectorRequirement> expressions =
                selector.getMatchExpressions() == null ? List.of() : selector.getMatchExpressions();
        for (int i = 0; i < expressions.size(); i++) {
            requirements.add(requirement(expressions.get(i), where + ".matchExpressions[" + i + "]"));
        }
        return new Selector(requirements);
    }

    /** The selectors of an aggregationRule, in order; an error names the first invalid one. */
    static List<Selector> compileAll(V1AggregationRule rule) throws InvalidSelectorException {
        List<V1LabelSelector> given = rule.getClusterRoleSelectors() == null ? List.of() : rule.getClusterRoleSelectors();
        List<Selector> selectors = new ArrayList<>(given.size());
        for (int i = 0; i < given.size(); i++) {
            selectors.add(compile(given.get(i), "aggregationRule.clusterRoleSelectors[" + i + "]"));
        }
        return selectors;
    }

    private static Requirement requirement(V1LabelSelectorRequirement expr, String at)
            throws InvalidSelectorException {
        String key = expr.getKey() == null ? "" : expr.getKey();
        checkKey(key, at + ".key");
        Operator op = Operator.of(expr.getOperator()).orElseThrow(() -> new InvalidSelectorException(
                at + ".operator: \"" + expr.getOperator() + "\" is not a valid label selector operator"
                        + " (In, NotIn, Exists, DoesNotExist)"));
        List<String> values = expr.getValues() == null ? List.of() : expr.getValues();
        switch (op) {
            case IN, NOT_IN -> {
                if (values.isEmpty()) {
                    throw new InvalidSelectorException(at + ".values: must be non-empty for " + op.apiName);
                }
            }
            case EXISTS, DOES_NOT_EXIST -> {
                if (!values.isEmpty()) {
                    throw new InvalidSelectorException(at + ".values: must be empty for " + op.apiName
                            + ", got " + values);
                }
            }
        }
        for (int i = 0; i < values.size(); i++) {
            checkValue(values.get(i) == null ? "" : values.get(i), at + ".values[" + i + "]");
        }
        return new Requirement(key, op, new LinkedHashSet<>(values));
    }

    private static void checkKey(String key, String at) throws InvalidSelectorException {
        Optional<String> problem = KubeNames.labelKeyProblem(key);
        if (problem.isPresent()) {
            throw new InvalidSelectorException(at + ": invalid label key \"" + key + "\": " + problem.get());
        }
    }

    private static void checkValue(String value, String at) throws InvalidSelectorException {
        Optional<String> problem = KubeNames.labelValueProblem(value);
        if (problem.isPresent()) {
            throw new InvalidSelectorException(at + ": invalid label value \"" + value + "\": " + problem.get());
        }
    }

    /** True when every requirement holds for {@code labels} ({@code null} means no labels). */
    boolean matches(Map<String, String> labels) {
        Map<String, String> l = labels == null ? Map.of() : labels;
        for (Requirement r : requirements) {
            if (!r.matches(l)) {
                return false;
            }
        }
        return true;
    }

    /**
     * The requirement a label index can answer, so candidates need not be every role: an {@code In} (the
     * one with the fewest values), else an {@code Exists}. Empty when only negative requirements remain:
     * such a selector can match a role with no labels at all, so every role is a candidate.
     */
    Optional<Requirement> indexable() {
        return requirements.stream().filter(r -> r.operator() == Operator.IN)
                .min(Comparator.comparingInt(r -> r.values().size()))
                .or(() -> requirements.stream().filter(r -> r.operator() == Operator.EXISTS).findFirst());
    }
}
