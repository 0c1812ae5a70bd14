package io.satoken.controlplane.aggregation;

import static io.satoken.controlplane.aggregation.Roles.expression;
import static io.satoken.controlplane.aggregation.Roles.matchLabels;
import static io.satoken.controlplane.aggregation.Roles.requirement;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.kubernetes.client.openapi.models.V1ClusterRole;
import io.kubernetes.client.openapi.models.V1LabelSelector;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.IntStream;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/** Label selectors in aggregation rules (CR-3: "turn it into a label selector (invalid → error)"). */
class SelectorTest {

    record Match(String name, V1LabelSelector selector, Map<String, String> labels, boolean matches) {
        @Override
        public String toString() {
            return name;
        }
    }

    static Stream<Match> matching() {
        Map<String, String> none = Map.of();
        return Stream.of(
                new Match("matchLabels: same value matches", matchLabels("a", "1"), Map.of("a", "1"), true),
                new Match("matchLabels: other value does not", matchLabels("a", "1"), Map.of("a", "2"), false),
                new Match("matchLabels: absent key does not", matchLabels("a", "1"), none, false),
                new Match("matchLabels: empty value matches an empty label", matchLabels("a", ""), Map.of("a", ""), true),
                new Match("In: one of the values matches", expression("a", "In", "1", "2"), Map.of("a", "2"), true),
                new Match("In: another value does not", expression("a", "In", "1", "2"), Map.of("a", "3"), false),
                new Match("In: needs the key present", expression("a", "In", "1"), Map.of("b", "1"), false),
                new Match("NotIn: absent key matches", expression("a", "NotIn", "1"), none, true),
                new Match("NotIn: other value matches", expression("a", "NotIn", "1"), Map.of("a", "2"), true),
                new Match("NotIn: listed value does not", expression("a", "NotIn", "1", "2"), Map.of("a", "2"), false),
                new Match("Exists: present key matches", expression("a", "Exists"), Map.of("a", "x"), true),
                new Match("Exists: an empty value is present", expression("a", "Exists"), Map.of("a", ""), true),
                new Match("Exists: absent key does not", expression("a", "Exists"), Map.of("b", "x"), false),
                new Match("DoesNotExist: absent key matches", expression("a", "DoesNotExist"), Map.of("b", "x"), true),
                new Match("DoesNotExist: present key does not", expression("a", "DoesNotExist"), Map.of("a", ""), false),
                new Match("empty selector matches anything", new V1LabelSelector(), Map.of("a", "1"), true),
                new Match("empty selector matches no labels", new V1LabelSelector(), none, true),
                new Match("null selector counts as empty", null, none, true),
                new Match("all requirements must hold: both do",
                        matchLabels("a", "1").addMatchExpressionsItem(requirement("b", "NotIn", "x")),
                        Map.of("a", "1", "b", "y"), true),
                new Match("all requirements must hold: one fails",
                        matchLabels("a", "1").addMatchExpressionsItem(requirement("b", "NotIn", "x")),
                        Map.of("a", "1", "b", "x"), false),
                new Match("prefixed keys match whole", matchLabels("rbac.example.com/aggregate-to-monitoring", "true"),
                        Map.of("rbac.example.com/aggregate-to-monitoring", "true"), true));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("matching")
    void selector_matchesAsKubernetesDoes(Match c) throws InvalidSelectorException {
        assertThat(Selector.compile(c.selector(), "s").matches(c.labels())).isEqualTo(c.matches());
    }

    record Invalid(String name, V1LabelSelector selector, String message) {
        @Override
        public String toString() {
            return name;
        }
    }

    static Stream<Invalid> invalid() {
        String long64 = "a".repeat(64);
        return Stream.of(
                new Invalid("unknown operator", expression("a", "Equals", "1"),
                        "s.matchExpressions[0].operator: \"Equals\" is not a valid label selector operator"),
                new Invalid("operator names are case-sensitive", expression("a", "in", "1"),
                        "\"in\" is not a valid label selector operator"),
                new Invalid("missing operator", expression("a", null, "1"), "\"null\" is not a valid"),
                new Invalid("In without values", expression("a", "In"),
                        "s.matchExpressions[0].values: must be non-empty for In"),
                new Invalid("NotIn without values", expression("a", "NotIn"), "must be non-empty for NotIn"),
                new Invalid("Exists with values", expression("a", "Exists", "1"),
                        "s.matchExpressions[0].values: must be empty for Exists, got [1]"),
                new Invalid("DoesNotExist with values", expression("a", "DoesNotExist", "1"),
                        "must be empty for DoesNotExist"),
                new Invalid("key with a space", matchLabels("bad key", "1"),
                        "s.matchLabels[bad key]: invalid label key \"bad key\""),
                new Invalid("empty key", expression("", "Exists"), "name part must be non-empty"),
                new Invalid("key starting with a dash", expression("-a", "Exists"), "invalid label key \"-a\""),
                new Invalid("key with two slashes", expression("a/b/c", "Exists"), "at most one '/'"),
                new Invalid("key with an empty prefix", expression("/a", "Exists"), "prefix part must be non-empty"),
                new Invalid("key with an uppercase prefix", expression("Example.com/a", "Exists"), "DNS-1123"),
                new Invalid("key name over 63 characters", expression(long64, "Exists"), "no more than 63"),
                new Invalid("value with a bang", matchLabels("a", "bad!"), "invalid label value \"bad!\""),
                new Invalid("In value ending with a dot", expression("a", "In", "ok", "x."),
                        "s.matchExpressions[0].values[1]: invalid label value \"x.\""),
                new Invalid("value over 63 characters", matchLabels("a", long64), "no more than 63"));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("invalid")
    void invalidSelector_isRejectedWithWhereAndWhy(Invalid c) {
        assertThatThrownBy(() -> Selector.compile(c.selector(), "s"))
                .isInstanceOf(InvalidSelectorException.class)
                .hasMessageContaining(c.message());
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("validEdges")
    void validEdges_compile(String key, String value) throws InvalidSelectorException {
        assertThat(Selector.compile(matchLabels(key, value), "s").matches(Map.of(key, value))).isTrue();
    }

    static Stream<Arguments> validEdges() {
        return Stream.of(
                Arguments.of("example.com/name", ""),
                Arguments.of("a".repeat(63), "b".repeat(63)),
                Arguments.of("A_b.c-D", "X.y_z-9"),
                Arguments.of("a.b-c.d/e", "1"));
    }

    /** The label indexes find exactly what testing every role would find, whatever the selector. */
    @ParameterizedTest(name = "{0}")
    @MethodSource("indexedSelectors")
    void rolesByLabel_findsWhatAScanFinds(String name, V1LabelSelector given) throws InvalidSelectorException {
        List<String> tiers = List.of("gold", "silver", "bronze");
        List<V1ClusterRole> roles = IntStream.range(0, 40).mapToObj(i -> {
            Map<String, String> labels = new HashMap<>();
            if (i % 2 == 0) {
                labels.put("tier", tiers.get(i % 3));
            }
            if (i % 5 == 0) {
                labels.put("team", i % 10 == 0 ? "" : "core");
            }
            return Roles.role("r" + i, labels, List.of());
        }).toList();
        Selector selector = Selector.compile(given, "s");

        List<String> found = new RolesByLabel(Roles.cache(roles)).matching(selector).stream()
                .map(r -> r.getMetadata().getName()).sorted().toList();

        List<String> scanned = roles.stream().filter(r -> selector.matches(r.getMetadata().getLabels()))
                .map(r -> r.getMetadata().getName()).sorted().toList();
        assertThat(found).isEqualTo(scanned).isNotEmpty();
    }

    static Stream<Arguments> indexedSelectors() {
        return Stream.of(
                Arguments.of("matchLabels", matchLabels("tier", "gold")),
                Arguments.of("In with two values", expression("tier", "In", "gold", "bronze")),
                Arguments.of("Exists", expression("team", "Exists")),
                Arguments.of("In and Exists",
                        expression("tier", "In", "silver").addMatchExpressionsItem(requirement("team", "Exists"))),
                Arguments.of("NotIn only (scans)", expression("tier", "NotIn", "gold")),
                Arguments.of("DoesNotExist only (scans)", expression("tier", "DoesNotExist")),
                Arguments.of("empty (scans)", new V1LabelSelector()));
    }
}
