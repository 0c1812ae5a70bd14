package io.satoken.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import io.satoken.agent.metrics.AgentMetrics;
import io.satoken.agent.config.AgentConfigParser;
import io.satoken.agent.runtime.AgentRuntime;
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
 * and every metric they name is one the agent or the control plane serves.
 */
class AlertRulesE2E {

    private static final Path RULES = E2E.repo().resolve("agent/deploy/alerts/satoken-alerts.yaml");
    private static final Pattern METRIC = Pattern.compile("\\b(satoken|process|jvm)_[a-z0-9_]+");

    @Test
    void promtool_acceptsTheRules() throws Exception {
        if (!Commands.onPath("promtool")) {
            System.err.println("*** SKIPPED AlertRulesE2E.promtool_acceptsTheRules: promtool is not installed "
                    + "(Debian's prometheus package) ***");
            Assumptions.assumeTrue(false, "AlertRulesE2E needs promtool");
        }
        Commands.Result check = Commands.run("promtool-check-rules", List.of("promtool", "check", "rules",
                RULES.toString()));
        assertThat(check.exit()).as(check.output()).isZero();
        assertThat(check.output()).contains("SUCCESS");
    }

    @Test
    void rules_coverTheFourCases() throws Exception {
        assertThat(alerts().keySet()).contains("SatokenTokenNearExpiry", "SatokenTokenRefreshFailing",
                "SatokenWebhookCertificateExpiresSoon", "SatokenNoLeader");
    }

    @Test
    void everyMetricARuleNames_isServed(@TempDir Path dir) throws Exception {
        Set<String> served = new TreeSet<>(families(agentScrape(dir.resolve("agent"))));
        Files.createDirectories(dir.resolve("controlplane"));
        served.addAll(families(ControlplaneScrape.render(dir.resolve("controlplane"))));
        // served only while the agent holds a token (absent rather than NaN before)
        served.add(AgentMetrics.SOONEST_EXPIRY);

        List<String> unknown = new ArrayList<>();
        alerts().forEach((alert, expr) -> {
            Matcher m = METRIC.matcher(expr);
            while (m.find()) {
                if (!served.contains(m.group())) {
                    unknown.add(alert + ": " + m.group());
                }
            }
        });
        assertThat(unknown).isEmpty();
    }

    /** Alert name to expression. */
    @SuppressWarnings("unchecked")
    private static Map<String, String> alerts() throws Exception {
        Map<String, String> out = new java.util.LinkedHashMap<>();
        try (Reader reader = Files.newBufferedReader(RULES)) {
            Map<String, Object> doc = new Yaml(new SafeConstructor(new LoaderOptions())).load(reader);
            for (Object group : (List<Object>) doc.get("groups")) {
                for (Object rule : (List<Object>) ((Map<String, Object>) group).get("rules")) {
                    Map<String, Object> r = (Map<String, Object>) rule;
                    out.put(String.valueOf(r.get("alert")), String.valueOf(r.get("expr")));
                }
            }
        }
        return out;
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
