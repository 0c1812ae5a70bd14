package io.satoken.common.docs;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.yaml.snakeyaml.LoaderOptions;
import org.yaml.snakeyaml.Yaml;
import org.yaml.snakeyaml.constructor.SafeConstructor;

/**
 * The alert rules exist in three files: the rules file {@code agent/deploy/alerts/satoken-alerts.yaml}, which promtool
 * checks and tests, and the PrometheusRule of each monitoring Component, one group each. The Components' copies must
 * equal the rules file's groups, and every alert's {@code runbook_url} must lead to a heading of
 * docs/operations.md.
 */
class PrometheusRulesTest {

    static final String RULES = "agent/deploy/alerts/satoken-alerts.yaml";
    static final String RUNBOOKS = "docs/operations.md";
    static final String RUNBOOK_BASE = "https://github.com/satoken/satoken/blob/main/" + RUNBOOKS + "#";
    /** Each Component's PrometheusRule and the group of the rules file it carries. */
    static final Map<String, String> COMPONENTS = Map.of(
            "agent/deploy/components/monitoring/prometheusrule.yaml", "satoken-agent",
            "controlplane/deploy/components/monitoring/prometheusrule.yaml", "satoken-controlplane");

    @Test
    void eachComponentsPrometheusRule_holdsItsGroupOfTheRulesFile_unchanged() throws IOException {
        Map<String, Object> groups = groupsByName(list(map(load(RULES)).get("groups")));

        Set<String> shipped = new LinkedHashSet<>();
        for (Map.Entry<String, String> component : COMPONENTS.entrySet()) {
            Map<String, Object> rule = map(load(component.getKey()));
            assertThat(rule).as(component.getKey()).containsEntry("apiVersion", "monitoring.coreos.com/v1")
                    .containsEntry("kind", "PrometheusRule");
            List<Object> itsGroups = list(map(rule.get("spec")).get("groups"));
            assertThat(itsGroups).as(component.getKey() + " against " + RULES)
                    .containsExactly(groups.get(component.getValue()));
            shipped.add(component.getValue());
        }
        assertThat(shipped).as("every group of " + RULES + " is shipped").containsExactlyInAnyOrderElementsOf(
                groups.keySet());
    }

    @Test
    void everyAlert_hasARunbookUrl_toAHeadingOfTheOperationsPage() throws IOException {
        Set<String> anchors = anchors(Files.readString(RuleIdsDefinedTest.repositoryRoot().resolve(RUNBOOKS)));
        List<String> problems = new ArrayList<>();
        int alerts = 0;
        for (Object group : list(map(load(RULES)).get("groups"))) {
            for (Object rule : list(map(group).get("rules"))) {
                Object alert = map(rule).get("alert");
                if (alert == null) {
                    continue;
                }
                alerts++;
                Object url = map(map(rule).get("annotations")).get("runbook_url");
                if (!(url instanceof String u) || !u.startsWith(RUNBOOK_BASE)) {
                    problems.add(alert + ": runbook_url " + url + " is not under " + RUNBOOK_BASE);
                } else if (!anchors.contains(u.substring(RUNBOOK_BASE.length()))) {
                    problems.add(alert + ": " + RUNBOOKS + " has no heading with the anchor "
                            + u.substring(RUNBOOK_BASE.length()));
                }
            }
        }
        assertThat(alerts).as("alerts in " + RULES).isPositive();
        assertThat(problems).isEmpty();
    }

    @Test
    void anchors_areGitHubs_lowerCaseWithoutPunctuation_hyphenForSpace() {
        assertThat(anchors("# Operations: metrics, alerts\n### SatokenAgentDown\n## Flags that survive `kubeadm upgrade`\n"
                + "```sh\n# not a heading\n```\n"))
                .containsExactly("operations-metrics-alerts", "satokenagentdown", "flags-that-survive-kubeadm-upgrade");
    }

    /** The anchors GitHub gives a page's headings (outside code blocks), in order. */
    static Set<String> anchors(String markdown) {
        Set<String> anchors = new LinkedHashSet<>();
        boolean code = false;
        for (String line : markdown.split("\n", -1)) {
            if (line.startsWith("```")) {
                code = !code;
            } else if (!code && line.matches("#{1,6} .*")) {
                String text = line.replaceFirst("^#+ ", "").strip().toLowerCase(Locale.ROOT);
                anchors.add(text.replaceAll("[^\\p{L}\\p{N} _-]", "").replace(' ', '-'));
            }
        }
        return anchors;
    }

    private static Map<String, Object> groupsByName(List<Object> groups) {
        Map<String, Object> byName = new LinkedHashMap<>();
        groups.forEach(g -> byName.put(String.valueOf(map(g).get("name")), g));
        return byName;
    }

    private static Object load(String file) throws IOException {
        return new Yaml(new SafeConstructor(new LoaderOptions()))
                .load(Files.readString(RuleIdsDefinedTest.repositoryRoot().resolve(file)));
    }

    @SuppressWarnings("unchecked")
    private static Map<String, Object> map(Object o) {
        assertThat(o).isInstanceOf(Map.class);
        return (Map<String, Object>) o;
    }

    @SuppressWarnings("unchecked")
    private static List<Object> list(Object o) {
        assertThat(o).isInstanceOf(List.class);
        return (List<Object>) o;
    }
}
