package io.satoken.controlplane.aggregation;

import static io.satoken.controlplane.aggregation.Roles.aggregating;
import static io.satoken.controlplane.aggregation.Roles.expression;
import static io.satoken.controlplane.aggregation.Roles.matchLabels;
import static io.satoken.controlplane.aggregation.Roles.role;
import static io.satoken.controlplane.aggregation.Roles.rule;
import static org.assertj.core.api.Assertions.assertThat;

import io.kubernetes.client.openapi.models.V1ClusterRole;
import io.kubernetes.client.openapi.models.V1LabelSelector;
import io.kubernetes.client.openapi.models.V1PolicyRule;
import io.satoken.controlplane.controller.DeepCopy;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.TreeMap;
import java.util.stream.IntStream;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Chains and cycles of aggregating roles, and agreement with upstream's queue-everything triggers (CR-1),
 * on an {@link InMemoryCluster}: writes go back into the cache and trigger what they trigger, until quiet.
 */
class AggregationConvergenceTest {

    private static final int MAX_SYNCS = 10_000;

    static List<V1PolicyRule> rules(String... verbs) {
        return Stream.of(verbs).map(v -> rule(v, "things")).toList();
    }

    static List<Rule> rulesOf(InMemoryCluster cluster, String name) {
        return Rule.of(cluster.get(name).getRules());
    }

    // CR-3 through a chain: leaf ← mid ← top
    @Test
    void chain_converges_withOneWritePerAggregate() {
        InMemoryCluster cluster = new InMemoryCluster(false);
        cluster.put(aggregating("top", List.of(matchLabels("l", "mid")), List.of()));
        cluster.put(aggregating("mid", Map.of("l", "mid"), List.of(matchLabels("l", "leaf")), List.of()));
        cluster.put(role("leaf", Map.of("l", "leaf"), rules("a")));
        cluster.runUntilQuiet(MAX_SYNCS);

        assertThat(rulesOf(cluster, "mid")).isEqualTo(Rule.of(rules("a")));
        assertThat(rulesOf(cluster, "top")).isEqualTo(Rule.of(rules("a")));
        assertThat(cluster.writes()).isEqualTo(2);

        cluster.put(role("leaf", Map.of("l", "leaf"), rules("a", "b")));
        cluster.runUntilQuiet(MAX_SYNCS);
        assertThat(rulesOf(cluster, "top")).isEqualTo(Rule.of(rules("a", "b")));
        assertThat(cluster.writes()).isEqualTo(4);
    }

    // a chain created from the top down: each aggregate is written once, when its input has its rules
    @Test
    void deepChain_createdTopDown_writesEachAggregateOnce() {
        InMemoryCluster cluster = new InMemoryCluster(false);
        int depth = 20;
        for (int i = depth; i >= 1; i--) {
            cluster.put(aggregating("agg-" + i, Map.of("l", "" + i), List.of(matchLabels("l", "" + (i - 1))), List.of()));
            cluster.runUntilQuiet(MAX_SYNCS);
        }
        cluster.put(role("leaf", Map.of("l", "0"), rules("a", "b")));
        cluster.runUntilQuiet(MAX_SYNCS);

        assertThat(rulesOf(cluster, "agg-" + depth)).isEqualTo(Rule.of(rules("a", "b")));
        assertThat(cluster.writes()).isEqualTo(depth);
    }

    /**
     * Cycles: every member ends with the rules of the cycle's inputs, after one write each; writes stop,
     * and a resync changes nothing (CR-5).
     */
    record Cycle(String name, List<V1ClusterRole> roles) {
        @Override
        public String toString() {
            return name;
        }
    }

    static Stream<Cycle> cycles() {
        return Stream.of(
                new Cycle("two roles selecting each other", List.of(
                        aggregating("a", Map.of("l", "a"), List.of(matchLabels("l", "b"), matchLabels("l", "c")), List.of()),
                        aggregating("b", Map.of("l", "b"), List.of(matchLabels("l", "a"), matchLabels("l", "d")), List.of()),
                        role("c", Map.of("l", "c"), rules("c")),
                        role("d", Map.of("l", "d"), rules("d")))),
                new Cycle("three roles in a ring", List.of(
                        aggregating("a", Map.of("l", "a"), List.of(matchLabels("l", "c"), matchLabels("l", "x")), List.of()),
                        aggregating("b", Map.of("l", "b"), List.of(matchLabels("l", "a"), matchLabels("l", "y")), List.of()),
                        aggregating("c", Map.of("l", "c"), List.of(matchLabels("l", "b"), matchLabels("l", "z")), List.of()),
                        role("x", Map.of("l", "x"), rules("x")),
                        role("y", Map.of("l", "y"), rules("y")),
                        role("z", Map.of("l", "z"), rules("z", "x")))),
                new Cycle("a ring whose members hold the same rules in different orders", List.of(
                        aggregating("a", Map.of("l", "a"), List.of(matchLabels("l", "b")), rules("x", "y")),
                        aggregating("b", Map.of("l", "b"), List.of(matchLabels("l", "c")), rules("y", "x")),
                        aggregating("c", Map.of("l", "c"), List.of(matchLabels("l", "a")), rules("x", "y")),
                        role("leaf", Map.of("l", "a"), rules("x", "y")))),
                new Cycle("a role selecting itself (CR-3: skipped)", List.of(
                        aggregating("self", Map.of("team", "t"), List.of(matchLabels("team", "t")), List.of()),
                        role("leaf", Map.of("team", "t"), rules("a")))),
                new Cycle("every aggregate selects every aggregate", Stream.concat(
                        IntStream.range(0, 5).mapToObj(i -> aggregating("agg-" + i, Map.of("agg", "yes", "n", "" + i),
                                List.of(matchLabels("agg", "yes"), matchLabels("leaf", "" + i)), List.of())),
                        IntStream.range(0, 5).mapToObj(i -> role("leaf-" + i, Map.of("leaf", "" + i), rules("v" + i))))
                        .toList()));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("cycles")
    void cycle_reachesAFixedPoint_withOneWritePerMember(Cycle c) {
        InMemoryCluster cluster = new InMemoryCluster(false);
        c.roles().forEach(cluster::put);
        cluster.runUntilQuiet(MAX_SYNCS);

        List<V1ClusterRole> members = c.roles().stream().filter(r -> r.getAggregationRule() != null).toList();
        List<Rule> inputs = c.roles().stream().filter(r -> r.getAggregationRule() == null)
                .flatMap(r -> Rule.of(r.getRules()).stream()).distinct().toList();
        for (V1ClusterRole member : members) {
            assertThat(rulesOf(cluster, member.getMetadata().getName()))
                    .as(member.getMetadata().getName()).containsExactlyInAnyOrderElementsOf(inputs);
        }
        assertThat(cluster.writes()).isLessThanOrEqualTo(members.size());
        int writes = cluster.writes();
        cluster.queueEveryAggregatingRole();
        cluster.runUntilQuiet(MAX_SYNCS);
        assertThat(cluster.writes()).as("a resync at the fixed point writes nothing").isEqualTo(writes);
    }

    /**
     * Why a cycle member's stored rules are not read as input (AggregateRules): with upstream's formula,
     * each member of the ring a ← b ← c ← a becomes the de-duplicated rules of the one it selects, so two
     * orders of the same rules are handed round the ring forever, a write each time, whatever the order of
     * the syncs (this is the FIFO of a queue that holds all three).
     */
    @Test
    void ring_withUpstreamsFormula_neverSettles() {
        Map<String, List<String>> stored = new TreeMap<>(Map.of(
                "a", List.of("x", "y"), "b", List.of("y", "x"), "c", List.of("x", "y")));
        Map<String, String> selects = Map.of("a", "b", "b", "c", "c", "a");
        int writes = 0;
        for (int round = 0; round < 100; round++) {
            for (String member : List.of("a", "b", "c")) {
                List<String> computed = stored.get(selects.get(member)).stream().distinct().toList();
                if (!computed.equals(stored.get(member))) {
                    stored.put(member, computed);
                    writes++;
                }
            }
        }
        assertThat(writes).isGreaterThanOrEqualTo(200);
    }

    /**
     * A cycle's inputs leaving take their rules with them: the least fixed point. (Upstream's formula keeps
     * such a rule, each member finding it in the other, until the cycle is broken.)
     */
    @Test
    void cycle_dropsARuleWhoseSourceLeft() {
        InMemoryCluster cluster = new InMemoryCluster(false);
        cycles().findFirst().orElseThrow().roles().forEach(cluster::put);
        cluster.runUntilQuiet(MAX_SYNCS);
        assertThat(rulesOf(cluster, "b")).contains(Rule.of(rule("d", "things")));

        cluster.put(role("d", Map.of(), rules("d")));
        cluster.runUntilQuiet(MAX_SYNCS);

        assertThat(rulesOf(cluster, "a")).isEqualTo(Rule.of(rules("c")));
        assertThat(rulesOf(cluster, "b")).isEqualTo(Rule.of(rules("c")));
    }

    /** A cycle broken by a selector change: the former members become a chain and converge as one. */
    @Test
    void cycle_brokenByASelectorChange_convergesAsAChain() {
        InMemoryCluster cluster = new InMemoryCluster(false);
        cycles().findFirst().orElseThrow().roles().forEach(cluster::put);
        cluster.runUntilQuiet(MAX_SYNCS);

        cluster.put(aggregating("a", Map.of("l", "a"), List.of(matchLabels("l", "c")), List.of()));
        cluster.runUntilQuiet(MAX_SYNCS);

        assertThat(rulesOf(cluster, "a")).isEqualTo(Rule.of(rules("c")));
        assertThat(rulesOf(cluster, "b")).isEqualTo(Rule.of(rules("c", "d")));
    }

    static Stream<Long> seeds() {
        return Stream.of(1L, 2L, 3L, 4L, 5L, 6L, 7L, 8L);
    }

    /**
     * Random edits of an acyclic set of roles (aggregates select leaves and lower aggregates): after each
     * one, the selective triggers and upstream's queue-everything triggers end with the same rules on every
     * role, and the selective ones sync less.
     */
    @ParameterizedTest(name = "seed {0}")
    @MethodSource("seeds")
    void randomEdits_endAsUpstreamEnds(long seed) {
        Random random = new Random(seed);
        Workload workload = new Workload(random, false);
        InMemoryCluster ours = new InMemoryCluster(false);
        InMemoryCluster upstream = new InMemoryCluster(true);
        int oursSyncs = 0;
        int upstreamSyncs = 0;
        for (V1ClusterRole role : workload.initial()) {
            ours.put(role);
            upstream.put(role);
        }
        for (int step = 0; step < 150; step++) {
            oursSyncs += ours.runUntilQuiet(MAX_SYNCS);
            upstreamSyncs += upstream.runUntilQuiet(MAX_SYNCS);
            assertThat(snapshot(ours)).as("step %d", step).isEqualTo(snapshot(upstream));
            workload.edit(ours, upstream);
        }
        assertThat(oursSyncs).isLessThan(upstreamSyncs);
    }

    /** The same with cycles allowed: every edit still ends quiet, at a fixed point. */
    @ParameterizedTest(name = "seed {0}")
    @MethodSource("seeds")
    void randomEditsWithCycles_alwaysEndQuiet(long seed) {
        Random random = new Random(seed);
        Workload workload = new Workload(random, true);
        InMemoryCluster cluster = new InMemoryCluster(false);
        workload.initial().forEach(cluster::put);
        int stepsWithACycle = 0;
        for (int step = 0; step < 150; step++) {
            stepsWithACycle += hasCycle(cluster) ? 1 : 0;
            cluster.runUntilQuiet(MAX_SYNCS);
            int writes = cluster.writes();
            cluster.queueEveryAggregatingRole();
            cluster.runUntilQuiet(MAX_SYNCS);
            assertThat(cluster.writes()).as("step %d: fixed point", step).isEqualTo(writes);
            workload.edit(cluster);
        }
        assertThat(stepsWithACycle).as("the workload makes cycles").isGreaterThan(10);
    }

    /** True when some aggregating role reaches itself through other roles' selectors. */
    private static boolean hasCycle(InMemoryCluster cluster) {
        Map<String, List<String>> selects = new HashMap<>();
        List<V1ClusterRole> aggregates = cluster.roles().stream().filter(r -> r.getAggregationRule() != null).toList();
        for (V1ClusterRole p : aggregates) {
            List<Selector> selectors;
            try {
                selectors = Selector.compileAll(p.getAggregationRule());
            } catch (InvalidSelectorException e) {
                continue;
            }
            selects.put(p.getMetadata().getName(), aggregates.stream().filter(q -> q != p)
                    .filter(q -> selectors.stream().anyMatch(s -> s.matches(q.getMetadata().getLabels())))
                    .map(q -> q.getMetadata().getName()).toList());
        }
        for (String start : selects.keySet()) {
            Deque<String> todo = new ArrayDeque<>(selects.get(start));
            Set<String> seen = new HashSet<>();
            while (!todo.isEmpty()) {
                String next = todo.pop();
                if (next.equals(start)) {
                    return true;
                }
                if (seen.add(next)) {
                    todo.addAll(selects.getOrDefault(next, List.of()));
                }
            }
        }
        return false;
    }

    private static Map<String, List<Rule>> snapshot(InMemoryCluster cluster) {
        Map<String, List<Rule>> rules = new TreeMap<>();
        cluster.roles().forEach(r -> rules.put(r.getMetadata().getName(), Rule.of(r.getRules())));
        return rules;
    }

    /** 30 leaves and 8 aggregates with random labels, rules and selectors, and random edits of them. */
    private static final class Workload {
        private static final int LEAVES = 30;
        private static final int AGGREGATES = 8;
        private final Random random;
        private final boolean cycles;

        Workload(Random random, boolean cycles) {
            this.random = random;
            this.cycles = cycles;
        }

        List<V1ClusterRole> initial() {
            List<V1ClusterRole> roles = new ArrayList<>();
            for (int i = 0; i < AGGREGATES; i++) {
                roles.add(aggregate(i));
            }
            for (int i = 0; i < LEAVES; i++) {
                roles.add(leaf(i));
            }
            return roles;
        }

        void edit(InMemoryCluster... clusters) {
            int pick = random.nextInt(10);
            V1ClusterRole role;
            String deleted = null;
            if (pick < 4) {
                role = leaf(random.nextInt(LEAVES)); // new labels and rules
            } else if (pick < 5) {
                deleted = "leaf-" + random.nextInt(LEAVES);
                role = null;
            } else if (pick < 7) {
                role = aggregate(random.nextInt(AGGREGATES)); // new selectors
            } else if (pick < 8) {
                String name = "agg-" + random.nextInt(AGGREGATES); // someone edits an aggregate's rules
                role = DeepCopy.of(clusters[0].get(name)).rules(rules("manual"));
            } else {
                V1ClusterRole leaf = clusters[0].get("leaf-" + random.nextInt(LEAVES));
                role = leaf == null ? leaf(0) : DeepCopy.of(leaf).rules(randomRules()); // rules only
            }
            for (InMemoryCluster cluster : clusters) {
                if (deleted != null) {
                    cluster.delete(deleted);
                } else {
                    cluster.put(role);
                }
            }
        }

        private V1ClusterRole leaf(int i) {
            Map<String, String> labels = new HashMap<>();
            labels.put("kind", "leaf");
            if (random.nextInt(4) > 0) {
                labels.put("g", "g" + random.nextInt(5));
            }
            if (random.nextBoolean()) {
                labels.put("t", "");
            }
            return role("leaf-" + i, labels, randomRules());
        }

        private V1ClusterRole aggregate(int i) {
            List<V1LabelSelector> selectors = new ArrayList<>();
            int count = 1 + random.nextInt(3);
            for (int s = 0; s < count; s++) {
                int upTo = cycles ? AGGREGATES : i;
                if (random.nextInt(3) == 0 && upTo > 0) {
                    selectors.add(expression("level", "In", "" + random.nextInt(upTo), "" + random.nextInt(upTo)));
                } else {
                    V1LabelSelector leaves = switch (random.nextInt(4)) {
                        case 0 -> matchLabels("g", "g" + random.nextInt(5));
                        case 1 -> expression("g", "In", "g" + random.nextInt(5), "g" + random.nextInt(5));
                        case 2 -> expression("t", "Exists");
                        default -> expression("g", "NotIn", "g" + random.nextInt(5));
                    };
                    selectors.add(leaves.putMatchLabelsItem("kind", "leaf"));
                }
            }
            return aggregating("agg-" + i, Map.of("level", "" + i), selectors, List.of());
        }

        private List<V1PolicyRule> randomRules() {
            return IntStream.range(0, 1 + random.nextInt(3)).mapToObj(k -> rule("verb" + random.nextInt(12), "things"))
                    .toList();
        }
    }
}
