package io.satoken.controlplane.aggregation;

import static io.satoken.controlplane.aggregation.Roles.aggregating;
import static io.satoken.controlplane.aggregation.Roles.chiselRules;
import static io.satoken.controlplane.aggregation.Roles.concat;
import static io.satoken.controlplane.aggregation.Roles.expression;
import static io.satoken.controlplane.aggregation.Roles.hammerRules;
import static io.satoken.controlplane.aggregation.Roles.matchLabels;
import static io.satoken.controlplane.aggregation.Roles.role;
import static io.satoken.controlplane.aggregation.Roles.rule;
import static io.satoken.controlplane.aggregation.Roles.sawRules;
import static org.assertj.core.api.Assertions.assertThat;

import com.google.gson.JsonParser;
import io.kubernetes.client.openapi.models.V1ClusterRole;
import io.kubernetes.client.openapi.models.V1LabelSelector;
import io.kubernetes.client.openapi.models.V1PolicyRule;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.satoken.controlplane.aggregation.RecordingWriter.Apply;
import io.satoken.controlplane.aggregation.RecordingWriter.Update;
import io.satoken.controlplane.controller.DeepCopy;
import io.satoken.controlplane.controller.Reconciler.Result;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/** The sync of one aggregating role (spec 7), upstream's TestSyncClusterRole table first. */
class AggregationSyncTest {

    /**
     * @param roles   the cache; the synced role is always {@code combined}
     * @param written the rules expected in the write, or null when no call may be made
     */
    record Case(String name, List<V1ClusterRole> roles, List<V1PolicyRule> written) {
        @Override
        public String toString() {
            return name;
        }
    }

    static V1ClusterRole combined(List<V1LabelSelector> selectors, List<V1PolicyRule> rules) {
        return aggregating("combined", selectors, rules);
    }

    static List<V1LabelSelector> fooBar() {
        return List.of(matchLabels("foo", "bar"));
    }

    static List<V1LabelSelector> fooBarThenNotBar() {
        return List.of(matchLabels("foo", "bar"), matchLabels("foo", "not-bar"));
    }

    /** TestSyncClusterRole (spec 7), case for case. */
    static Stream<Case> upstreamTable() {
        return Stream.of(
                // CR-3, CR-6: a rule from a role no longer selected goes
                new Case("remove dead rules", List.of(
                        role("hammer", Map.of("foo", "bar"), hammerRules()),
                        combined(fooBar(), sawRules())),
                        hammerRules()),
                // CR-3, CR-6: nothing selected → empty rules
                new Case("strip rules", List.of(
                        role("hammer", Map.of("foo", "not-bar"), hammerRules()),
                        combined(fooBar(), hammerRules())),
                        List.of()),
                // CR-3: matched roles sorted by name
                new Case("select properly and put in order", List.of(
                        role("hammer", Map.of("foo", "bar"), hammerRules()),
                        role("chisel", Map.of("foo", "bar"), chiselRules()),
                        role("saw", Map.of("foo", "not-bar"), sawRules()),
                        combined(fooBar(), List.of())),
                        concat(chiselRules(), hammerRules())),
                // CR-3: selectors in the order given
                new Case("select properly with multiple selectors", List.of(
                        role("hammer", Map.of("foo", "bar"), hammerRules()),
                        role("chisel", Map.of("foo", "bar"), chiselRules()),
                        role("saw", Map.of("foo", "not-bar"), sawRules()),
                        combined(fooBarThenNotBar(), List.of())),
                        concat(chiselRules(), hammerRules(), sawRules())),
                // CR-3, CR-4: an equal rule appears once
                new Case("select properly remove duplicates", List.of(
                        role("hammer", Map.of("foo", "bar"), hammerRules()),
                        role("chisel", Map.of("foo", "bar"), chiselRules()),
                        role("saw", Map.of("foo", "bar"), sawRules()),
                        role("other-saw", Map.of("foo", "not-bar"), sawRules()),
                        combined(fooBarThenNotBar(), List.of())),
                        concat(chiselRules(), hammerRules(), sawRules())),
                // CR-5: nothing to change → no call at all
                new Case("no diff skip", List.of(
                        role("hammer", Map.of("foo", "bar"), hammerRules()),
                        combined(fooBar(), hammerRules())),
                        null));
    }

    /** Beyond upstream's table: the edges of CR-3..CR-5. */
    static Stream<Case> moreCases() {
        V1PolicyRule getList = new V1PolicyRule().verbs(List.of("get", "list")).resources(List.of("pods"));
        V1PolicyRule listGet = new V1PolicyRule().verbs(List.of("list", "get")).resources(List.of("pods"));
        V1PolicyRule nullGroups = new V1PolicyRule().verbs(List.of("get")).resources(List.of("pods")).apiGroups(null);
        V1PolicyRule emptyGroups = new V1PolicyRule().verbs(List.of("get")).resources(List.of("pods"))
                .apiGroups(new ArrayList<>());
        return Stream.of(
                // CR-3: self-exclusion, even when the role's own labels match its selector
                new Case("skips itself when it matches its own selector", List.of(
                        role("hammer", Map.of("foo", "bar"), hammerRules()),
                        Roles.aggregating("combined", Map.of("foo", "bar"), fooBar(), List.of(rule("own", "rule")))),
                        hammerRules()),
                // CR-4: order inside a list is significant
                new Case("keeps rules whose verbs differ only in order", List.of(
                        role("a", Map.of("foo", "bar"), List.of(getList)),
                        role("b", Map.of("foo", "bar"), List.of(listGet)),
                        combined(fooBar(), List.of())),
                        List.of(getList, listGet)),
                // CR-4: no merging of rules that differ in one verb
                new Case("does not merge rules on the same resource", List.of(
                        role("a", Map.of("foo", "bar"), List.of(rule("get", "pods"), rule("list", "pods"))),
                        combined(fooBar(), List.of())),
                        List.of(rule("get", "pods"), rule("list", "pods"))),
                // CR-4: null and empty are equal; the first one seen is kept
                new Case("counts null and empty lists as equal when de-duplicating", List.of(
                        role("a", Map.of("foo", "bar"), List.of(nullGroups)),
                        role("b", Map.of("foo", "bar"), List.of(emptyGroups)),
                        combined(fooBar(), List.of())),
                        List.of(nullGroups)),
                // CR-4, CR-5: current rules with [] where the aggregate has null → equal, no call
                new Case("no call when current rules differ only by null versus empty", List.of(
                        role("a", Map.of("foo", "bar"), List.of(nullGroups)),
                        combined(fooBar(), List.of(emptyGroups))),
                        null),
                // CR-5: same rules in another order is a difference
                new Case("rewrites rules that are only out of order", List.of(
                        role("hammer", Map.of("foo", "bar"), hammerRules()),
                        role("chisel", Map.of("foo", "bar"), chiselRules()),
                        combined(fooBar(), concat(hammerRules(), chiselRules()))),
                        concat(chiselRules(), hammerRules())),
                // CR-3: a role selected by two selectors contributes once, at its first place
                new Case("a role selected twice contributes at its first selector", List.of(
                        role("hammer", Map.of("foo", "bar", "tool", "yes"), hammerRules()),
                        role("chisel", Map.of("tool", "yes"), chiselRules()),
                        combined(List.of(matchLabels("foo", "bar"), matchLabels("tool", "yes")), List.of())),
                        concat(hammerRules(), chiselRules())),
                // CR-3 with matchExpressions: NotIn selects roles without the key
                new Case("NotIn selects roles without the key", List.of(
                        role("hammer", Map.of("foo", "bar"), hammerRules()),
                        role("chisel", Map.of(), chiselRules()),
                        role("saw", Map.of("foo", "secret"), sawRules()),
                        combined(List.of(expression("foo", "NotIn", "secret")), List.of())),
                        concat(chiselRules(), hammerRules())),
                // CR-3 with matchExpressions: Exists, then In with two values
                new Case("Exists and In select by key and by value", List.of(
                        role("hammer", Map.of("tier", "gold"), hammerRules()),
                        role("chisel", Map.of("tier", "bronze"), chiselRules()),
                        role("saw", Map.of("team", ""), sawRules()),
                        combined(List.of(expression("team", "Exists"), expression("tier", "In", "gold", "silver")),
                                List.of())),
                        concat(sawRules(), hammerRules())),
                // CR-3: an empty selector selects every role (but itself)
                new Case("an empty selector selects every other role", List.of(
                        role("hammer", null, hammerRules()),
                        role("chisel", Map.of("x", "y"), chiselRules()),
                        combined(List.of(new V1LabelSelector()), List.of())),
                        concat(chiselRules(), hammerRules())),
                // CR-3: no selectors at all → empty
                new Case("no selectors aggregates nothing", List.of(
                        role("hammer", Map.of("foo", "bar"), hammerRules()),
                        combined(List.of(), hammerRules())),
                        List.of()));
    }

    static Stream<Arguments> everyCaseWithApplyWorkingOrRefused() {
        return Stream.concat(upstreamTable(), moreCases())
                .flatMap(c -> Stream.of(Arguments.of(c, false), Arguments.of(c, true)));
    }

    /** CR-5, CR-6, CR-7: exactly one apply with the expected body; on 415, that apply and then the update. */
    @ParameterizedTest(name = "{0}, apply refused with 415: {1}")
    @MethodSource("everyCaseWithApplyWorkingOrRefused")
    void sync_writesTheAggregateOnce(Case c, boolean applyRefused) {
        RecordingWriter api = new RecordingWriter();
        if (applyRefused) {
            api.failApplies(415);
        }
        Result result = sync(c.roles(), api).reconcile("combined");

        assertThat(result).isEqualTo(Result.DONE);
        if (c.written() == null) {
            assertThat(api.calls).isEmpty();
            return;
        }
        Apply apply = Apply.of("combined", expectedApplyBody(c.written()));
        if (!applyRefused) {
            assertThat(api.calls).containsExactly(apply);
            return;
        }
        V1ClusterRole expected = DeepCopy.of(c.roles().stream()
                .filter(r -> r.getMetadata().getName().equals("combined")).findFirst().orElseThrow());
        expected.setRules(c.written().isEmpty() ? null : c.written());
        assertThat(api.calls).containsExactly(apply, new Update(expected));
    }

    /** The body upstream's apply configuration serializes to, written out by hand. */
    static String expectedApplyBody(List<V1PolicyRule> rules) {
        StringBuilder json = new StringBuilder("""
                {"apiVersion":"rbac.authorization.k8s.io/v1","kind":"ClusterRole","metadata":{"name":"combined"}""");
        if (!rules.isEmpty()) {
            json.append(",\"rules\":[");
            for (int i = 0; i < rules.size(); i++) {
                V1PolicyRule r = rules.get(i);
                List<String> fields = new ArrayList<>();
                field(fields, "apiGroups", r.getApiGroups());
                field(fields, "resources", r.getResources());
                field(fields, "resourceNames", r.getResourceNames());
                field(fields, "nonResourceURLs", r.getNonResourceURLs());
                field(fields, "verbs", r.getVerbs());
                json.append(i == 0 ? "" : ",").append("{").append(String.join(",", fields)).append("}");
            }
            json.append("]");
        }
        return json.append("}").toString();
    }

    private static void field(List<String> fields, String name, List<String> values) {
        if (values != null && !values.isEmpty()) {
            fields.add("\"" + name + "\":[" + String.join(",", values.stream().map(v -> "\"" + v + "\"").toList()) + "]");
        }
    }

    @Test
    void apply_carriesEveryRuleField() {
        V1PolicyRule full = new V1PolicyRule().verbs(List.of("get")).apiGroups(List.of("", "apps"))
                .resources(List.of("deployments")).resourceNames(List.of("web"))
                .nonResourceURLs(List.of("/healthz"));
        RecordingWriter api = new RecordingWriter();

        sync(List.of(role("a", Map.of("foo", "bar"), List.of(full)), combined(fooBar(), List.of())), api)
                .reconcile("combined");

        assertThat(api.calls).containsExactly(Apply.of("combined", """
                {"apiVersion":"rbac.authorization.k8s.io/v1","kind":"ClusterRole","metadata":{"name":"combined"},
                 "rules":[{"apiGroups":["","apps"],"resources":["deployments"],"resourceNames":["web"],
                           "nonResourceURLs":["/healthz"],"verbs":["get"]}]}"""));
    }

    // CR-7: the update changes rules only; labels, annotations and the aggregationRule stay
    @Test
    void update_keepsEverythingButTheRules() {
        V1ClusterRole combined = combined(fooBar(), List.of());
        combined.getMetadata().labels(Map.of("keep", "me")).annotations(Map.of("note", "kept"));
        RecordingWriter api = new RecordingWriter().failApplies(415);

        sync(List.of(role("hammer", Map.of("foo", "bar"), hammerRules()), combined), api).reconcile("combined");

        V1ClusterRole updated = ((Update) api.calls.get(1)).role();
        assertThat(updated.getMetadata()).isEqualTo(combined.getMetadata());
        assertThat(updated.getAggregationRule()).isEqualTo(combined.getAggregationRule());
        assertThat(updated.getRules()).isEqualTo(hammerRules());
        assertThat(combined.getRules()).as("the cached object is never changed").isEmpty();
        assertThat(JsonParser.parseString(ApiClusterRoleWriter.rulesPatch(updated).json()))
                .as("the update is sent as a patch of the rules, guarded by the version read")
                .isEqualTo(JsonParser.parseString("""
                        {"metadata": {"resourceVersion": "%s"},
                         "rules": [{"apiGroups": [], "nonResourceURLs": [], "resourceNames": [],
                                    "resources": ["nails"], "verbs": ["hammer"]},
                                   {"apiGroups": [], "nonResourceURLs": [], "resourceNames": [],
                                    "resources": ["wedges"], "verbs": ["hammer"]}]}"""
                        .formatted(combined.getMetadata().getResourceVersion())));
    }

    // CR-2
    @Test
    void sync_ofAMissingRole_doesNothing() {
        RecordingWriter api = new RecordingWriter();
        assertThat(sync(List.of(), api).reconcile("combined")).isEqualTo(Result.DONE);
        assertThat(api.calls).isEmpty();
    }

    // CR-2
    @Test
    void sync_ofARoleWithoutAggregationRule_doesNothing() {
        RecordingWriter api = new RecordingWriter();
        List<V1ClusterRole> roles = List.of(role("hammer", Map.of("foo", "bar"), hammerRules()),
                role("combined", Map.of("foo", "bar"), sawRules()));
        assertThat(sync(roles, api).reconcile("combined")).isEqualTo(Result.DONE);
        assertThat(api.calls).isEmpty();
    }

    // CR-6: other errors → retried
    @Test
    void applyFailure_otherThan415_isRetriedWithoutUpdate() {
        RecordingWriter api = new RecordingWriter().failApplies(500);
        List<V1ClusterRole> roles = List.of(role("hammer", Map.of("foo", "bar"), hammerRules()),
                combined(fooBar(), List.of()));
        assertThat(sync(roles, api).reconcile("combined")).isEqualTo(Result.RETRY);
        assertThat(api.calls).hasSize(1).allMatch(Apply.class::isInstance);
    }

    @Test
    void updateFailure_afterA415_isRetried() {
        RecordingWriter api = new RecordingWriter().failApplies(415).failUpdates(409);
        List<V1ClusterRole> roles = List.of(role("hammer", Map.of("foo", "bar"), hammerRules()),
                combined(fooBar(), List.of()));
        assertThat(sync(roles, api).reconcile("combined")).isEqualTo(Result.RETRY);
        assertThat(api.calls).hasSize(2);
    }

    // CR-3: an invalid selector fails the whole role (no write, even for its valid selectors), not retried
    @Test
    void invalidSelector_writesNothingAndIsNotRetried() {
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        RecordingWriter api = new RecordingWriter();
        List<V1ClusterRole> roles = List.of(role("hammer", Map.of("foo", "bar"), hammerRules()),
                combined(List.of(matchLabels("foo", "bar"), expression("foo", "Equals", "bar")), List.of()));
        AggregationSync sync = new AggregationSync(new RolesByLabel(Roles.cache(roles)), api,
                new AggregationMetrics(registry));

        assertThat(sync.reconcile("combined")).isEqualTo(Result.DONE);
        assertThat(api.calls).isEmpty();
        assertThat(registry.get("satoken_aggregation_invalid_selectors_total").counter().count()).isEqualTo(1);
    }

    // an invalid role does not block the others
    @Test
    void invalidSelector_doesNotBlockOtherRoles() {
        RecordingWriter api = new RecordingWriter();
        List<V1ClusterRole> roles = List.of(role("hammer", Map.of("foo", "bar"), hammerRules()),
                aggregating("broken", List.of(expression("foo", "In")), List.of()),
                combined(fooBar(), List.of()));
        AggregationSync sync = sync(roles, api);

        assertThat(sync.reconcile("broken")).isEqualTo(Result.DONE);
        assertThat(sync.reconcile("combined")).isEqualTo(Result.DONE);
        assertThat(api.calls).containsExactly(Apply.of("combined", expectedApplyBody(hammerRules())));
    }

    @Test
    void writes_areCountedByKind() {
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        List<V1ClusterRole> roles = List.of(role("hammer", Map.of("foo", "bar"), hammerRules()),
                combined(fooBar(), List.of()));
        AggregationMetrics metrics = new AggregationMetrics(registry);
        new AggregationSync(new RolesByLabel(Roles.cache(roles)), new RecordingWriter(), metrics).reconcile("combined");
        new AggregationSync(new RolesByLabel(Roles.cache(roles)), new RecordingWriter().failApplies(415), metrics)
                .reconcile("combined");

        assertThat(registry.get("satoken_aggregation_writes_total").tag("kind", "apply").counter().count()).isEqualTo(1);
        assertThat(registry.get("satoken_aggregation_writes_total").tag("kind", "update").counter().count()).isEqualTo(1);
    }

    private static AggregationSync sync(List<V1ClusterRole> roles, RecordingWriter api) {
        return new AggregationSync(new RolesByLabel(Roles.cache(roles)), api,
                new AggregationMetrics(new SimpleMeterRegistry()));
    }
}
