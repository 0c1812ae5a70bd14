package io.satoken.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import com.google.gson.Gson;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.yaml.snakeyaml.LoaderOptions;
import org.yaml.snakeyaml.Yaml;
import org.yaml.snakeyaml.constructor.SafeConstructor;

/**
 * The optional monitoring components (agent/deploy/components/monitoring, controlplane/deploy/components/monitoring)
 * render with their bases, their PodMonitors find the pods they are for and label them as the alert rules
 * expect, and the Grafana dashboard's queries parse and name only metrics the programs serve.
 */
class MonitoringE2E {

    private static final Path DASHBOARD =
            E2E.repo().resolve("agent/deploy/components/monitoring/satoken-dashboard.json");
    private static final Pattern JOB = Pattern.compile("job=~?\"([^\"]+)\"");
    private static final Set<String> JOBS = Set.of("satoken-agent", "satoken-controlplane", "satoken-webhook");

    @Test
    void agentComponent_scrapesTheDaemonSetsPods_byNode(@TempDir Path dir) throws Exception {
        List<Map<String, Object>> objects = render(dir, "agent/deploy");
        List<Map<String, Object>> monitors = ofKind(objects, "PodMonitor");
        assertThat(monitors).hasSize(1);
        Map<String, Object> daemonSet = only(ofKind(objects, "DaemonSet"));
        assertScrapes(monitors.get(0), daemonSet);
        Object agent = list(map(map(map(daemonSet.get("spec")).get("template")).get("spec")).get("containers")).get(0);
        List<Object> command = new ArrayList<>(list(map(agent).get("command")));
        assertThat(command).as("the base's loopback address, opened to the node's addresses")
                .containsSequence("--metrics-address", "0.0.0.0:9810");
        List<Object> relabelings = new ArrayList<>(list(endpoint(monitors.get(0)).get("relabelings")));
        assertThat(relabelings).as("the agent's series carry the pod's node, which SatokenAgentDown matches on")
                .contains(Map.of("sourceLabels", List.of("__meta_kubernetes_pod_node_name"), "targetLabel", "node"));

        Map<String, Object> dashboard = only(ofKind(objects, "ConfigMap").stream()
                .filter(c -> name(c).equals("satoken-dashboard")).toList());
        assertThat(map(map(dashboard.get("metadata")).get("labels"))).containsEntry("grafana_dashboard", "1");
        assertThat(map(dashboard.get("data")).get("satoken-dashboard.json")).isEqualTo(Files.readString(DASHBOARD));
        assertRulesCheck(dir, objects, "satoken-system", "satoken-agent");
    }

    @Test
    void controlplaneComponent_scrapesBothDeployments(@TempDir Path dir) throws Exception {
        List<Map<String, Object>> objects = render(dir, "controlplane/deploy");
        List<Map<String, Object>> monitors = ofKind(objects, "PodMonitor");
        List<Map<String, Object>> deployments = ofKind(objects, "Deployment");
        assertThat(monitors).extracting(MonitoringE2E::name)
                .containsExactlyInAnyOrder("satoken-controlplane", "satoken-webhook");
        for (Map<String, Object> monitor : monitors) {
            assertScrapes(monitor, only(deployments.stream().filter(d -> name(d).equals(name(monitor))).toList()));
        }
        assertRulesCheck(dir, objects, "satoken-controlplane", "satoken-controlplane");
    }

    /**
     * The component renders one PrometheusRule, in its half's namespace, holding the rules group of that name, and
     * promtool accepts that group as a rules file.
     */
    private static void assertRulesCheck(Path dir, List<Map<String, Object>> objects, String namespace, String group)
            throws Exception {
        Map<String, Object> rule = only(ofKind(objects, "PrometheusRule"));
        assertThat(namespace(rule)).isEqualTo(namespace);
        List<?> groups = list(map(rule.get("spec")).get("groups"));
        assertThat(groups).extracting(g -> map(g).get("name")).containsExactly(group);
        AlertRulesE2E.requirePromtool("MonitoringE2E PrometheusRule " + group);
        Path file = dir.resolve(group + "-rules.yaml");
        Files.writeString(file, new Yaml().dump(Map.of("groups", groups)));
        Commands.Result check = Commands.run("promtool-check-" + group, List.of("promtool", "check", "rules",
                file.toString()));
        assertThat(check.exit()).as(check.output()).isZero();
    }

    @Test
    void dashboard_queriesNameServedMetricsAndKnownJobs(@TempDir Path dir) throws Exception {
        Set<String> served = AlertRulesE2E.servedFamilies(dir);
        List<String> problems = new ArrayList<>();
        for (Map.Entry<String, String> q : queries().entrySet()) {
            problems.addAll(AlertRulesE2E.unserved(q.getKey(), q.getValue(), served));
            Matcher job = JOB.matcher(q.getValue());
            while (job.find()) {
                for (String name : job.group(1).split("\\|")) {
                    if (!JOBS.contains(name)) {
                        problems.add(q.getKey() + ": job " + name);
                    }
                }
            }
        }
        assertThat(problems).isEmpty();
    }

    @Test
    void dashboard_queriesParse(@TempDir Path dir) throws Exception {
        AlertRulesE2E.requirePromtool("MonitoringE2E.dashboard_queriesParse");
        // promtool parses PromQL in rule files: each query becomes a recording rule
        StringBuilder rules = new StringBuilder("groups:\n  - name: dashboard\n    rules:\n");
        int i = 0;
        for (String expr : queries().values()) {
            rules.append("      - record: dashboard:query").append(i++).append("\n        expr: ")
                    .append(new Gson().toJson(expr.replace("$__rate_interval", "5m"))).append('\n');
        }
        Path file = Files.writeString(dir.resolve("dashboard-rules.yaml"), rules);
        Commands.Result check = Commands.run("promtool-check-dashboard",
                List.of("promtool", "check", "rules", file.toString()));
        assertThat(check.exit()).as(check.output()).isZero();
    }

    /** The PodMonitor selects the workload's pods, in their namespace, on a named port of theirs; job = its name. */
    private static void assertScrapes(Map<String, Object> monitor, Map<String, Object> workload) {
        Map<String, Object> template = map(map(workload.get("spec")).get("template"));
        Map<String, Object> podLabels = map(map(template.get("metadata")).get("labels"));
        Map<String, Object> spec = map(monitor.get("spec"));
        assertThat(namespace(monitor)).isEqualTo(namespace(workload));
        assertThat(podLabels).containsAllEntriesOf(map(map(spec.get("selector")).get("matchLabels")));
        assertThat(podLabels.get(String.valueOf(spec.get("jobLabel")))).as("job").isEqualTo(name(workload))
                .isIn(JOBS);
        List<Object> ports = new ArrayList<>();
        for (Object container : list(map(template.get("spec")).get("containers"))) {
            for (Object port : list(map(container).get("ports"))) {
                ports.add(map(port).get("name"));
            }
        }
        assertThat(ports).contains(endpoint(monitor).get("port"));
    }

    /** {@code kubectl kustomize} of an overlay with {@code base} and its monitoring component. */
    private static List<Map<String, Object>> render(Path dir, String base) throws Exception {
        if (!Kubectl.installed()) {
            System.err.println("*** SKIPPED MonitoringE2E: kubectl is not installed ***");
            Assumptions.assumeTrue(false, "MonitoringE2E needs kubectl");
        }
        Path overlay = Files.createDirectories(dir.resolve("overlay"));
        Files.writeString(overlay.resolve("kustomization.yaml"), "resources:\n  - "
                + overlay.relativize(E2E.repo().resolve(base)) + "\ncomponents:\n  - "
                + overlay.relativize(E2E.repo().resolve(base + "/components/monitoring")) + "\n");
        Commands.Result rendered = Commands.run("kubectl-kustomize",
                List.of("kubectl", "kustomize", overlay.toString()));
        assertThat(rendered.exit()).as(rendered.output()).isZero();
        List<Map<String, Object>> objects = new ArrayList<>();
        for (Object doc : new Yaml(new SafeConstructor(new LoaderOptions())).loadAll(rendered.output())) {
            if (doc != null) {
                objects.add(map(doc));
            }
        }
        return objects;
    }

    /** Panel title (with the query's position) to query, for every query of every panel. */
    private static Map<String, String> queries() throws Exception {
        Map<String, Object> dashboard = map(new Gson().fromJson(Files.readString(DASHBOARD), Map.class));
        Map<String, String> out = new java.util.LinkedHashMap<>();
        for (Object panel : list(dashboard.get("panels"))) {
            List<?> targets = list(map(panel).get("targets"));
            for (int i = 0; i < targets.size(); i++) {
                out.put(map(panel).get("title") + " #" + i, String.valueOf(map(targets.get(i)).get("expr")));
            }
        }
        assertThat(out).isNotEmpty();
        return out;
    }

    private static Map<String, Object> endpoint(Map<String, Object> monitor) {
        return map(only(list(map(monitor.get("spec")).get("podMetricsEndpoints"))));
    }

    private static List<Map<String, Object>> ofKind(List<Map<String, Object>> objects, String kind) {
        return objects.stream().filter(o -> kind.equals(o.get("kind"))).toList();
    }

    private static String name(Map<String, Object> object) {
        return String.valueOf(map(object.get("metadata")).get("name"));
    }

    private static String namespace(Map<String, Object> object) {
        return String.valueOf(map(object.get("metadata")).get("namespace"));
    }

    private static <T> T only(List<T> items) {
        assertThat(items).hasSize(1);
        return items.get(0);
    }

    @SuppressWarnings("unchecked")
    private static Map<String, Object> map(Object value) {
        return value instanceof Map<?, ?> m ? (Map<String, Object>) m : Map.of();
    }

    private static List<?> list(Object value) {
        return value instanceof List<?> l ? l : List.of();
    }
}
