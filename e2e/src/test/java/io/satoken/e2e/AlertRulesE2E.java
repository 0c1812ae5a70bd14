package io.satoken.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import io.satoken.agent.metrics.AgentMetrics;
import io.satoken.agent.config.AgentConfigParser;
import io.satoken.agent.runtime.AgentRuntime;
import io.satoken.agent.runtime.TokenConfinement;
import io.satoken.agent.token.TokenSourceException;
import io.satoken.common.testing.PrometheusText;
import io.satoken.controlplane.testing.ControlplaneScrape;
import java.io.Reader;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.yaml.snakeyaml.LoaderOptions;
import org.yaml.snakeyaml.Yaml;
import org.yaml.snakeyaml.constructor.SafeConstructor;

/**
 * The example alert rules (agent/deploy/alerts/satoken-alerts.yaml): Prometheus's own checker accepts them,
 * their unit tests (satoken-alerts.test.yaml) fire every one of them, every metric they name is one the agent
 * or the control plane serves, and the README's alert table lists them all.
 */
class AlertRulesE2E {

    private static final Path RULES = E2E.repo().resolve("agent/deploy/alerts/satoken-alerts.yaml");
    private static final Path RULE_TESTS = E2E.repo().resolve("agent/deploy/alerts/satoken-alerts.test.yaml");
    private static final Pattern METRIC = Pattern.compile("\\b(satoken|process|jvm)_[a-z0-9_]+");

    @Test
    void promtool_acceptsTheRules() throws Exception {
        requirePromtool("AlertRulesE2E.promtool_acceptsTheRules");
        Commands.Result check = Commands.run("promtool-check-rules", List.of("promtool", "check", "rules",
                RULES.toString()));
        assertThat(check.exit()).as(check.output()).isZero();
        assertThat(check.output()).contains("SUCCESS");
    }

    @Test
    void promtool_passesTheRuleTests() throws Exception {
        requirePromtool("AlertRulesE2E.promtool_passesTheRuleTests");
        Commands.Result test = Commands.run("promtool-test-rules", List.of("promtool", "test", "rules",
                RULE_TESTS.toString()));
        assertThat(test.exit()).as(test.output()).isZero();
        assertThat(test.output()).contains("SUCCESS");
    }

    @Test
    void everyAlert_hasATestThatFiresIt() throws Exception {
        Set<String> fired = new TreeSet<>();
        for (Object test : list(yaml(RULE_TESTS).get("tests"))) {
            for (Object check : list(((Map<?, ?>) test).get("alert_rule_test"))) {
                Map<?, ?> c = (Map<?, ?>) check;
                if (!list(c.get("exp_alerts")).isEmpty()) {
                    fired.add(String.valueOf(c.get("alertname")));
                }
            }
        }
        assertThat(fired).containsExactlyInAnyOrderElementsOf(alerts().keySet());
    }

    @Test
    void rules_coverWhatMustPage() throws Exception {
        assertThat(alerts().keySet()).contains("SatokenTokenNearExpiry", "SatokenTokenRefreshFailing",
                "SatokenWebhookCertificateExpiresSoon", "SatokenNoLeader", "SatokenAgentDown",
                "SatokenWebhookNoReadyReplicas", "SatokenCsiPublishFailing", "SatokenTokenNotReread");
    }

    @Test
    void operationsGuide_listsEveryAlert() throws Exception {
        String readme = Files.readString(E2E.repo().resolve("docs/operations.md"));
        int start = readme.indexOf("| alert |");
        String table = readme.substring(start, readme.indexOf("\n\n", start));
        List<String> missing = alerts().keySet().stream().filter(a -> !table.contains("`" + a + "`")).toList();
        assertThat(missing).as("alerts missing from the alert table of docs/operations.md").isEmpty();
    }

    @Test
    void everyMetricARuleNames_isServed(@TempDir Path dir) throws Exception {
        Set<String> served = servedFamilies(dir);
        List<String> unknown = new ArrayList<>();
        alerts().forEach((alert, expr) -> unknown.addAll(unserved(alert, expr, served)));
        assertThat(unknown).isEmpty();
    }

    /** The metric families a freshly built agent (both modes) and control plane serve. */
    static Set<String> servedFamilies(Path dir) throws Exception {
        Set<String> served = new TreeSet<>(families(agentScrape(dir.resolve("agent"))));
        Files.createDirectories(dir.resolve("controlplane"));
        served.addAll(families(ControlplaneScrape.render(dir.resolve("controlplane"))));
        // served only while the agent holds a token (absent rather than NaN before)
        served.add(AgentMetrics.SOONEST_EXPIRY);
        // its series appear with the control plane's first request to the API server (verb and code labels)
        served.add("satoken_api_requests_total");
        // registered in CSI mode once the agent has an API server to read the token webhook's registration from
        served.add(TokenConfinement.METRIC);
        return served;
    }

    /** {@code "<where>: <metric>"} for each satoken, process or jvm metric in {@code expr} not in {@code served}. */
    static List<String> unserved(String where, String expr, Set<String> served) {
        List<String> unknown = new ArrayList<>();
        Matcher m = METRIC.matcher(expr);
        while (m.find()) {
            // a histogram's series are named after its family: x_count, x_sum, x_bucket
            String family = m.group().replaceFirst("_(count|sum|bucket)$", "");
            if (!served.contains(m.group()) && !served.contains(family)) {
                unknown.add(where + ": " + m.group());
            }
        }
        return unknown;
    }

    /** Alert name to expression. */
    @SuppressWarnings("unchecked")
    private static Map<String, String> alerts() throws Exception {
        Map<String, String> out = new java.util.LinkedHashMap<>();
        for (Object group : (List<Object>) yaml(RULES).get("groups")) {
            for (Object rule : (List<Object>) ((Map<String, Object>) group).get("rules")) {
                Map<String, Object> r = (Map<String, Object>) rule;
                out.put(String.valueOf(r.get("alert")), String.valueOf(r.get("expr")));
            }
        }
        return out;
    }

    private static Map<String, Object> yaml(Path file) throws Exception {
        try (Reader reader = Files.newBufferedReader(file)) {
            return new Yaml(new SafeConstructor(new LoaderOptions())).load(reader);
        }
    }

    private static List<?> list(Object value) {
        return value instanceof List<?> l ? l : List.of();
    }

    static void requirePromtool(String test) {
        if (!Commands.onPath("promtool")) {
            System.err.println("*** SKIPPED " + test + ": promtool is not installed "
                    + "(Debian's prometheus package) ***");
            Assumptions.assumeTrue(false, test + " needs promtool");
        }
    }

    private static Set<String> families(String scrape) {
        return PrometheusText.parse(scrape).families().keySet();
    }

    /** A freshly built agent in both modes; its token source is never called. */
    private static String agentScrape(Path dir) throws Exception {
        Files.createDirectories(dir);
        String yaml = "mode: both\nkubeletDir: " + dir.resolve("kubelet") + "\nprojections:\n"
                + "  - {namespace: ns, serviceAccount: app, expirationSeconds: 3600, dir: " + dir.resolve("tokens") + "}\n";
        Path configFile = Files.writeString(dir.resolve("agent.yaml"), yaml);
        AgentRuntime agent = new AgentRuntime(new AgentRuntime.Settings(AgentConfigParser.parse(yaml), configFile,
                yaml.getBytes(StandardCharsets.UTF_8), "node-1", new InetSocketAddress("127.0.0.1", 0),
                Optional.empty(), "e2e"), key -> {
                    throw new TokenSourceException("not in this test", null, true, null);
                }, null);
        try {
            return agent.metrics().registry().scrape();
        } finally {
            agent.close();
        }
    }
}
