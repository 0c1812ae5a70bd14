package io.satoken.controlplane.aggregation;

import static io.satoken.controlplane.aggregation.Roles.aggregating;
import static io.satoken.controlplane.aggregation.Roles.expression;
import static io.satoken.controlplane.aggregation.Roles.hammerRules;
import static io.satoken.controlplane.aggregation.Roles.matchLabels;
import static io.satoken.controlplane.aggregation.Roles.role;
import static io.satoken.controlplane.aggregation.Roles.sawRules;
import static org.assertj.core.api.Assertions.assertThat;

import io.kubernetes.client.openapi.models.V1ClusterRole;
import io.kubernetes.client.openapi.models.V1PolicyRule;
import io.satoken.controlplane.controller.DeepCopy;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.UnaryOperator;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Which aggregating roles a ClusterRole event queues. Upstream queues all of them (CR-1); ours only those
 * whose result the event can change, which gives the same results because a role's aggregate depends only
 * on its own aggregationRule and on the labels and rules of the roles it selects (CR-3).
 */
class AggregationTriggersTest {

    private static final String VIEW = "rbac.example.com/aggregate-to-view";
    private static final String EDIT = "rbac.example.com/aggregate-to-edit";

    /** The aggregating roles every case starts with, each added (and so indexed) first. */
    static List<V1ClusterRole> aggregators() {
        return List.of(
                aggregating("view", List.of(matchLabels(VIEW, "true")), List.of()),
                aggregating("edit", List.of(matchLabels(EDIT, "true"), matchLabels(VIEW, "true")), List.of()),
                aggregating("precious", List.of(expression("tier", "In", "gold", "silver")), List.of()),
                aggregating("teams", List.of(expression("team", "Exists")), List.of()));
    }

    sealed interface Event permits Added, Updated, Deleted {
        Set<String> deliver(AggregationTriggers triggers);
    }

    record Added(V1ClusterRole role) implements Event {
        public Set<String> deliver(AggregationTriggers triggers) {
            return triggers.added(role);
        }
    }

    record Updated(V1ClusterRole before, V1ClusterRole after) implements Event {
        public Set<String> deliver(AggregationTriggers triggers) {
            return triggers.updated(before, after);
        }
    }

    record Deleted(V1ClusterRole role) implements Event {
        public Set<String> deliver(AggregationTriggers triggers) {
            return triggers.deleted(role);
        }
    }

    /**
     * @param earlier events delivered first (their queues are not checked)
     * @param event   the event whose queue is checked
     */
    record Case(String name, List<Event> earlier, Event event, Set<String> queued) {
        @Override
        public String toString() {
            return name;
        }
    }

    static V1ClusterRole leaf(Map<String, String> labels) {
        return role("leaf", labels, hammerRules());
    }

    static Updated change(V1ClusterRole before, UnaryOperator<V1ClusterRole> edit) {
        return new Updated(before, edit.apply(DeepCopy.of(before)));
    }

    static Stream<Case> cases() {
        V1ClusterRole viewLeaf = leaf(Map.of(VIEW, "true"));
        V1ClusterRole editLeaf = leaf(Map.of(EDIT, "true"));
        V1ClusterRole plain = leaf(Map.of("app", "x"));
        V1ClusterRole view = aggregators().get(0);
        return Stream.of(
                new Case("label added: the roles now selecting it", List.of(),
                        new Updated(plain, leaf(Map.of("app", "x", VIEW, "true"))), Set.of("view", "edit")),
                new Case("label removed: the roles that selected it", List.of(),
                        new Updated(editLeaf, leaf(Map.of())), Set.of("edit")),
                new Case("label changed: the roles selecting it before and after", List.of(),
                        new Updated(editLeaf, leaf(Map.of("tier", "silver"))), Set.of("edit", "precious")),
                new Case("In value changed to another listed value", List.of(),
                        new Updated(leaf(Map.of("tier", "gold")), leaf(Map.of("tier", "silver"))), Set.of("precious")),
                new Case("Exists: any value of the key", List.of(),
                        new Updated(plain, leaf(Map.of("app", "x", "team", ""))), Set.of("teams")),
                new Case("unselected label changed: nobody", List.of(),
                        new Updated(plain, leaf(Map.of("app", "y"))), Set.of()),
                new Case("rule changed: the roles selecting it", List.of(),
                        change(viewLeaf, r -> r.rules(sawRules())), Set.of("view", "edit")),
                new Case("rule changed on an unselected role: nobody", List.of(),
                        change(plain, r -> r.rules(sawRules())), Set.of()),
                new Case("only annotations changed: nobody", List.of(),
                        change(viewLeaf, r -> r.metadata(r.getMetadata().annotations(Map.of("a", "b")))), Set.of()),
                new Case("rules changed from empty to null only: nobody (CR-4)", List.of(),
                        new Updated(role("leaf", Map.of(VIEW, "true"), List.of()),
                                role("leaf", Map.of(VIEW, "true"), List.of()).rules(null)), Set.of()),
                new Case("role added: the roles selecting it", List.of(),
                        new Added(viewLeaf), Set.of("view", "edit")),
                new Case("role deleted: the roles that selected it", List.of(),
                        new Deleted(leaf(Map.of("tier", "gold", "team", "a"))), Set.of("precious", "teams")),
                new Case("aggregating role added: itself and the roles selecting it", List.of(),
                        new Added(aggregating("mid", Map.of(VIEW, "true"), List.of(matchLabels("m", "1")), List.of())),
                        Set.of("mid", "view", "edit")),
                new Case("aggregationRule changed: the role itself", List.of(),
                        change(view, r -> r.aggregationRule(aggregators().get(1).getAggregationRule())), Set.of("view")),
                new Case("aggregationRule changed: re-indexed, the new selector wakes it",
                        List.of(change(view, r -> r.aggregationRule(aggregators().get(2).getAggregationRule()))),
                        new Updated(plain, leaf(Map.of("tier", "gold"))), Set.of("view", "precious")),
                new Case("aggregationRule changed: re-indexed, the old selector no longer wakes it",
                        List.of(change(view, r -> r.aggregationRule(aggregators().get(2).getAggregationRule()))),
                        new Updated(editLeaf, leaf(Map.of(EDIT, "true", VIEW, "true"))), Set.of("edit")),
                new Case("aggregationRule removed: no longer woken, not queued itself",
                        List.of(change(view, r -> r.aggregationRule(null))),
                        new Added(viewLeaf), Set.of("edit")),
                new Case("aggregating role deleted: no longer woken",
                        List.of(new Deleted(view)), new Added(viewLeaf), Set.of("edit")),
                new Case("aggregating role's rules edited by someone: itself, to restore them", List.of(),
                        change(view, r -> r.rules(sawRules())), Set.of("view")),
                new Case("aggregate selected by another (chain): its new rules wake the other",
                        List.of(new Added(aggregating("mid", Map.of(VIEW, "true"), List.of(matchLabels("m", "1")),
                                List.of()))),
                        change(aggregating("mid", Map.of(VIEW, "true"), List.of(matchLabels("m", "1")), List.of()),
                                r -> r.rules(hammerRules())),
                        Set.of("mid", "view", "edit")),
                new Case("transitive: a change below a chain queues every aggregate above it",
                        List.of(new Added(aggregating("mid", Map.of(VIEW, "true"), List.of(matchLabels("m", "1")),
                                List.of()))),
                        new Added(role("bottom", Map.of("m", "1"), hammerRules())), Set.of("mid", "view", "edit")),
                new Case("transitive: a cycle member's input queues the whole cycle",
                        List.of(new Added(aggregating("ring-a", Map.of("r", "a"), List.of(matchLabels("r", "b"),
                                        matchLabels("in", "a")), List.of())),
                                new Added(aggregating("ring-b", Map.of("r", "b"), List.of(matchLabels("r", "a")),
                                        List.of()))),
                        new Added(role("input", Map.of("in", "a"), hammerRules())), Set.of("ring-a", "ring-b")),
                new Case("aggregating role's labels changed only: those selecting it, not itself", List.of(),
                        change(view, r -> r.metadata(r.getMetadata().labels(Map.of("team", "t")))), Set.of("teams")),
                new Case("negative-only selector (DoesNotExist) is tested on every event",
                        List.of(new Added(aggregating("public", List.of(expression("secret", "DoesNotExist")), List.of()))),
                        new Added(role("any", Map.of(), List.of())), Set.of("public")),
                new Case("negative-only selector (NotIn) wakes for a role losing the key",
                        List.of(new Added(aggregating("non-prod", List.of(expression("env", "NotIn", "prod")), List.of()))),
                        new Updated(role("x", Map.of("env", "prod"), hammerRules()), role("x", Map.of(), hammerRules())),
                        Set.of("non-prod")),
                new Case("invalid aggregationRule: never woken by others",
                        List.of(new Added(aggregating("broken", List.of(matchLabels(VIEW, "true"),
                                expression("x", "In")), List.of()))),
                        new Added(viewLeaf), Set.of("view", "edit")),
                new Case("invalid aggregationRule: its own change queues it (it may now be valid)",
                        List.of(new Added(aggregating("broken", List.of(expression("x", "In")), List.of()))),
                        change(aggregating("broken", List.of(expression("x", "In")), List.of()),
                                r -> r.aggregationRule(view.getAggregationRule())), Set.of("broken")),
                new Case("a role selecting itself is queued once", List.of(),
                        new Added(aggregating("self", Map.of("s", "1"), List.of(matchLabels("s", "1")), List.of())),
                        Set.of("self")));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("cases")
    void event_queuesOnlyTheRolesItCanAffect(Case c) {
        AggregationTriggers triggers = new AggregationTriggers();
        aggregators().forEach(triggers::added);
        c.earlier().forEach(e -> e.deliver(triggers));

        assertThat(c.event().deliver(triggers)).containsExactlyInAnyOrderElementsOf(c.queued());
    }

    @Test
    void aggregatingRoles_countsValidRulesOnly() {
        AggregationTriggers triggers = new AggregationTriggers();
        aggregators().forEach(triggers::added);
        triggers.added(aggregating("broken", List.of(expression("x", "In")), List.of()));
        triggers.deleted(aggregators().get(3));
        assertThat(triggers.aggregatingRoles()).isEqualTo(3);
    }

    @Test
    void manyAggregators_onlyTheMatchingOnesAreQueued() {
        AggregationTriggers triggers = new AggregationTriggers();
        List<V1PolicyRule> none = new ArrayList<>();
        for (int i = 0; i < 1000; i++) {
            triggers.added(aggregating("agg-" + i, List.of(matchLabels("group", "g" + (i % 100))), none));
        }
        Set<String> queued = triggers.updated(leaf(Map.of("group", "g1")), leaf(Map.of("group", "g2")));
        assertThat(queued).hasSize(20).allMatch(n -> Integer.parseInt(n.substring(4)) % 100 <= 2);
    }
}
