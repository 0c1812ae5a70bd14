package io.satoken.agent.deploy;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.io.Reader;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;
import org.yaml.snakeyaml.LoaderOptions;
import org.yaml.snakeyaml.Yaml;
import org.yaml.snakeyaml.constructor.SafeConstructor;

/**
 * Parses every manifest under {@code agent/deploy} and checks what the agent depends on: its RBAC, the
 * DaemonSet's contract with the {@code run} command, and the consumer example's mount of its own dir.
 */
class DeployManifestsTest {

    private static final Path DEPLOY = Repo.root().resolve("agent/deploy");
    private static final String NAMESPACE = "satoken-system";

    /** One object from a manifest file. */
    record Manifest(Path file, Map<String, Object> object) {
        String kind() {
            return (String) object.get("kind");
        }

        String name() {
            return str(object, "metadata", "name");
        }

        @Override
        public String toString() {
            return DEPLOY.relativize(file) + ": " + kind() + "/" + name();
        }
    }

    private static List<Manifest> parsed;

    /** Every object of every file, parsed once for the whole class. */
    static synchronized List<Manifest> manifests() {
        if (parsed == null) {
            try {
                parsed = parse();
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }
        return parsed;
    }

    private static List<Manifest> parse() throws IOException {
        List<Manifest> all = new ArrayList<>();
        for (Path file : yamlFiles()) {
            try (Reader reader = Files.newBufferedReader(file)) {
                for (Object doc : yaml().loadAll(reader)) {
                    if (doc != null) {
                        all.add(new Manifest(file, map(doc)));
                    }
                }
            }
        }
        return List.copyOf(all);
    }

    static Stream<Manifest> allManifests() {
        return manifests().stream();
    }

    @ParameterizedTest
    @MethodSource("allManifests")
    void everyObject_hasApiVersionKindAndName(Manifest m) {
        assertThat(m.object).containsKeys("apiVersion", "kind");
        assertThat(m.name()).isNotBlank();
    }

    @Test
    void theAgentsObjects_areInItsNamespace_andTheNamespaceIsAppliedFirst() throws IOException {
        List<Path> files = topLevelFiles();
        // kubectl apply -f agent/deploy/ takes the files in name order
        assertThat(files).isSorted();
        assertThat(only(files.get(0), "Namespace").name()).isEqualTo(NAMESPACE);
        for (Manifest m : manifests()) {
            if (files.contains(m.file) && m.object.get("metadata") instanceof Map<?, ?> meta && meta.containsKey("namespace")) {
                assertThat(meta.get("namespace")).as(m.toString()).isEqualTo(NAMESPACE);
            }
        }
    }

    @Test
    void clusterRole_grantsExactlyWhatTheAgentUses() {
        Map<String, Object> role = one("ClusterRole", "satoken-agent");
        Set<String> grants = new TreeSet<>();
        for (Object rule : list(role, "rules")) {
            Map<String, Object> r = map(rule);
            assertThat(r).containsOnlyKeys("apiGroups", "resources", "verbs");
            for (Object group : list(r, "apiGroups")) {
                for (Object resource : list(r, "resources")) {
                    for (Object verb : list(r, "verbs")) {
                        grants.add(group + "/" + resource + ":" + verb);
                    }
                }
            }
        }
        assertThat(grants).containsExactlyInAnyOrder(
                "/pods:get", "/pods:list", "/pods:watch",
                "/serviceaccounts/token:create",
                "/events:create", "/events:patch");
    }

    @Test
    void clusterRoleBinding_bindsTheRoleToTheDaemonSetsServiceAccount() {
        Map<String, Object> binding = one("ClusterRoleBinding", "satoken-agent");
        assertThat(map(binding.get("roleRef"))).containsEntry("kind", "ClusterRole").containsEntry("name", "satoken-agent");
        assertThat(list(binding, "subjects")).containsExactly(
                Map.of("kind", "ServiceAccount", "name", "satoken-agent", "namespace", NAMESPACE));
        one("ServiceAccount", "satoken-agent");
        assertThat(str(podSpec(), "serviceAccountName")).isEqualTo("satoken-agent");
    }

    @Test
    void daemonSet_getsNodeNameFromTheDownwardApi() {
        assertThat(env(agent(), "NODE_NAME")).isEqualTo(Map.of("valueFrom", Map.of("fieldRef", Map.of("fieldPath", "spec.nodeName"))));
    }

    @Test
    void daemonSet_runsTheAgentWithTheMountedConfigAndServesOn9810() {
        assertThat(list(agent(), "command")).containsExactly(
                "satoken-agent", "run", "--config", "/etc/satoken/agent.yaml", "--metrics-address", "0.0.0.0:9810");
        assertThat(mount(agent(), "config")).containsEntry("mountPath", "/etc/satoken").containsEntry("readOnly", true);
        assertThat(str(volume(podSpec(), "config"), "configMap", "name")).isEqualTo("satoken-agent-config");
        assertThat(agentConfig()).containsEntry("mode", "pods");
    }

    @Test
    void daemonSet_probesHealthzAndReadyz() {
        assertThat(map(agent().get("livenessProbe")).get("httpGet")).isEqualTo(Map.of("path", "/healthz", "port", 9810));
        assertThat(map(agent().get("readinessProbe")).get("httpGet")).isEqualTo(Map.of("path", "/readyz", "port", 9810));
        assertThat(map(agent().get("startupProbe")).get("httpGet")).isEqualTo(Map.of("path", "/healthz", "port", 9810));
    }

    @Test
    void daemonSet_mountsTheConfiguredRootDirFromTheHost() {
        String rootDir = (String) agentConfig().get("rootDir");
        assertThat(rootDir).isEqualTo("/var/lib/satoken");
        assertThat(map(volume(podSpec(), "root").get("hostPath")))
                .isEqualTo(Map.of("path", rootDir, "type", "DirectoryOrCreate"));
        assertThat(mount(agent(), "root"))
                .containsEntry("mountPath", rootDir)
                .containsEntry("mountPropagation", "None")
                .doesNotContainKey("readOnly");
    }

    @Test
    void daemonSet_runsAsRootWithOnlyChownAndDacOverride() {
        Map<String, Object> sc = map(agent().get("securityContext"));
        assertThat(sc).containsEntry("runAsUser", 0)
                .containsEntry("runAsNonRoot", false)
                .containsEntry("allowPrivilegeEscalation", false)
                .containsEntry("readOnlyRootFilesystem", true)
                .containsEntry("seccompProfile", Map.of("type", "RuntimeDefault"))
                .doesNotContainKey("privileged");
        assertThat(map(sc.get("capabilities")))
                .isEqualTo(Map.of("drop", List.of("ALL"), "add", List.of("CHOWN", "DAC_OVERRIDE")));
        // a read-only root file system, so the JVM gets a writable /tmp
        assertThat(mount(agent(), "tmp")).containsEntry("mountPath", "/tmp");
        assertThat(volume(podSpec(), "tmp")).containsKey("emptyDir");
    }

    @Test
    void daemonSet_runsOnEveryNodeAndUpdatesATenthAtATime() {
        Map<String, Object> ds = daemonSet();
        assertThat(list(podSpec(), "tolerations")).containsExactly(Map.of("operator", "Exists"));
        assertThat(str(podSpec(), "priorityClassName")).isEqualTo("system-node-critical");
        assertThat(map(map(ds.get("spec")).get("updateStrategy")))
                .isEqualTo(Map.of("type", "RollingUpdate", "rollingUpdate", Map.of("maxUnavailable", "10%")));
    }

    @Test
    void daemonSet_requestsMemoryAndLimitsMemoryButNotCpu() {
        Map<String, Object> resources = map(agent().get("resources"));
        assertThat(map(resources.get("requests"))).containsOnlyKeys("cpu", "memory");
        assertThat(map(resources.get("limits"))).containsOnlyKeys("memory");
        assertThat(env(agent(), "JAVA_OPTS")).isEqualTo(Map.of("value", "-XX:MaxRAMPercentage=70 -XX:+UseSerialGC"));
    }

    @Test
    void consumer_mountsItsOwnDirectoryBySubPathExpr() {
        Map<String, Object> pod = one("Pod", "satoken-consumer");
        Map<String, Object> spec = map(pod.get("spec"));
        Map<String, Object> reader = map(list(spec, "containers").get(0));

        // the admission webhook's own names, so that it accepts the pod unchanged
        assertThat(map(volume(spec, "satoken-agent-tokens").get("hostPath")))
                .containsEntry("path", agentConfig().get("rootDir") + "/pods");
        assertThat(mount(reader, "satoken-agent-tokens")).isEqualTo(Map.of(
                "name", "satoken-agent-tokens",
                "mountPath", "/var/run/secrets/satoken",
                "subPathExpr", "$(POD_UID)",
                "readOnly", true));
        assertThat(env(reader, "POD_UID")).isEqualTo(Map.of("valueFrom", Map.of("fieldRef", Map.of("fieldPath", "metadata.uid"))));
        assertThat(map(spec.get("securityContext"))).containsEntry("runAsUser", 1000).containsEntry("fsGroup", 2000);
    }

    @Test
    void consumer_asksForTwoTokensInItsAnnotation() {
        Map<String, Object> pod = one("Pod", "satoken-consumer");
        String annotation = str(pod, "metadata", "annotations", "satoken.io/projections");
        List<Object> projections = yaml().load(annotation);

        assertThat(projections).extracting(p -> map(p).get("path")).containsExactly("vault/token", "sts/token");
        assertThat(projections).extracting(p -> map(p).get("audience"))
                .containsExactly("https://vault.example.com", "sts.amazonaws.com");
        assertThat(map(projections.get(1)).get("expirationSeconds")).isEqualTo(7200);
    }

    // --- navigation ---

    private static Yaml yaml() {
        return new Yaml(new SafeConstructor(new LoaderOptions()));
    }

    private static List<Path> yamlFiles() throws IOException {
        try (Stream<Path> files = Files.walk(DEPLOY)) {
            return files.filter(f -> f.toString().endsWith(".yaml") || f.toString().endsWith(".yml")).sorted().toList();
        }
    }

    private static List<Path> topLevelFiles() throws IOException {
        return yamlFiles().stream().filter(f -> f.getParent().equals(DEPLOY)).toList();
    }

    private static Manifest only(Path file, String kind) {
        return manifests().stream().filter(m -> m.file.equals(file) && m.kind().equals(kind)).findFirst()
                .orElseThrow(() -> new AssertionError("no " + kind + " in " + file));
    }

    private static Map<String, Object> one(String kind, String name) {
        List<Manifest> found = manifests().stream().filter(m -> m.kind().equals(kind) && m.name().equals(name)).toList();
        assertThat(found).as(kind + "/" + name).hasSize(1);
        return found.get(0).object;
    }

    private static Map<String, Object> daemonSet() {
        return one("DaemonSet", "satoken-agent");
    }

    private static Map<String, Object> podSpec() {
        return map(map(map(daemonSet().get("spec")).get("template")).get("spec"));
    }

    private static Map<String, Object> agent() {
        List<Object> containers = list(podSpec(), "containers");
        assertThat(containers).hasSize(1);
        return map(containers.get(0));
    }

    private static Map<String, Object> agentConfig() {
        String text = str(one("ConfigMap", "satoken-agent-config"), "data", "agent.yaml");
        return map(yaml().load(text));
    }

    /** The env entry named {@code name}, without its name. */
    private static Map<String, Object> env(Map<String, Object> container, String name) {
        Map<String, Object> entry = named(list(container, "env"), name);
        entry.remove("name");
        return entry;
    }

    private static Map<String, Object> mount(Map<String, Object> container, String name) {
        return named(list(container, "volumeMounts"), name);
    }

    private static Map<String, Object> volume(Map<String, Object> podSpec, String name) {
        return named(list(podSpec, "volumes"), name);
    }

    private static Map<String, Object> named(List<Object> items, String name) {
        List<Map<String, Object>> found = items.stream().map(DeployManifestsTest::map)
                .filter(i -> name.equals(i.get("name"))).toList();
        assertThat(found).as(name).hasSize(1);
        return new LinkedHashMap<>(found.get(0));
    }

    private static String str(Map<String, Object> root, String... path) {
        Object node = root;
        for (String key : path) {
            node = map(node).get(key);
        }
        return (String) node;
    }

    @SuppressWarnings("unchecked")
    private static List<Object> list(Map<String, Object> parent, String key) {
        Object value = parent.get(key);
        assertThat(value).as(key).isInstanceOf(List.class);
        return (List<Object>) value;
    }

    @SuppressWarnings("unchecked")
    private static Map<String, Object> map(Object node) {
        assertThat(node).isInstanceOf(Map.class);
        return (Map<String, Object>) node;
    }
}
