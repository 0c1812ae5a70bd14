package io.satoken.agent.deploy;

import static io.satoken.common.testing.YamlTrees.list;
import static io.satoken.common.testing.YamlTrees.map;
import static org.assertj.core.api.Assertions.assertThat;

import io.satoken.common.testing.YamlTrees;
import io.satoken.common.cli.BuildVersion;
import io.satoken.common.projection.InvalidProjectionException;
import io.satoken.common.projection.ProjectionAnnotation;
import io.satoken.common.projection.ProjectionSpec;
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
import java.util.TreeMap;
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
 * CSIDriver, the DaemonSet as a CSI node plugin (its contract with the {@code run} command, its host
 * directories and why it is privileged), and the consumer example, a pod that asks for tokens with a CSI
 * inline volume and meets the restricted Pod Security level.
 */
class DeployManifestsTest {

    private static final Path DEPLOY = Repo.root().resolve("agent/deploy");
    private static final String KUSTOMIZATION = "kustomization.yaml";
    private static final Path IMAGES = Repo.root().resolve("deploy/images").resolve(KUSTOMIZATION);
    private static final String NAMESPACE = "satoken-system";
    private static final String DRIVER = "tokens.satoken.io";

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
        // read in name order, the namespace comes before what goes in it
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
            if (r.containsKey("resourceNames")) {
                // the one named read: the token webhook's registration, to tell whether it confines the agent
                assertThat(r).containsEntry("resources", List.of("validatingwebhookconfigurations"))
                        .containsEntry("resourceNames", List.of("satoken-controlplane"))
                        .containsEntry("verbs", List.of("get"));
            } else {
                assertThat(r).containsOnlyKeys("apiGroups", "resources", "verbs");
            }
            for (Object group : list(r, "apiGroups")) {
                for (Object resource : list(r, "resources")) {
                    for (Object verb : list(r, "verbs")) {
                        grants.add(group + "/" + resource + ":" + verb);
                    }
                }
            }
        }
        // one pod read per published volume: no list, no watch
        assertThat(grants).containsExactlyInAnyOrder(
                "/pods:get",
                "/serviceaccounts/token:create",
                "/events:create", "/events:patch",
                "admissionregistration.k8s.io/validatingwebhookconfigurations:get");
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

    /** Health and metrics on the node's loopback only: no pod and no other host reaches them. */
    @Test
    void daemonSet_runsTheAgentWithTheMountedConfig_andServesOnTheNodesLoopbackOnly() {
        assertThat(list(agent(), "command")).containsExactly(
                "satoken-agent", "run", "--config", "/etc/satoken/agent.yaml", "--metrics-address", "127.0.0.1:9810");
        // the host's network, so that loopback is the node's, where the kubelet's probes come from
        assertThat(podSpec()).containsEntry("hostNetwork", true);
        // no container port: nothing to reach from the pod network, and no host port to reserve
        assertThat(agent()).doesNotContainKey("ports");
        assertThat(mount(agent(), "config")).containsEntry("mountPath", "/etc/satoken").containsEntry("readOnly", true);
        assertThat(str(volume(podSpec(), "config"), "configMap", "name")).isEqualTo("satoken-agent-config");
        assertThat(agentConfig()).containsEntry("mode", "csi").doesNotContainKey("rootDir");
    }

    @Test
    void csiDriver_servesInlineVolumesWithPodInfoAndLeavesOwnershipToTheAgent() {
        Map<String, Object> driver = one("CSIDriver", DRIVER);
        assertThat(driver).containsEntry("apiVersion", "storage.k8s.io/v1");
        assertThat(map(driver.get("spec"))).isEqualTo(Map.of(
                "attachRequired", false,
                // the ServiceAccount and the pod binding come from the kubelet's pod info
                "podInfoOnMount", true,
                "volumeLifecycleModes", List.of("Ephemeral"),
                // PV-16..18 are applied by the agent; the kubelet must not chown or chmod the tmpfs
                "fsGroupPolicy", "None",
                "requiresRepublish", false));
    }

    @Test
    void daemonSet_probesHealthzAndReadyz_onTheLoopbackTheAgentListensOn() {
        Map<String, Object> loopback = Map.of("host", "127.0.0.1", "path", "/healthz", "port", 9810);
        assertThat(map(agent().get("livenessProbe")).get("httpGet")).isEqualTo(loopback);
        assertThat(map(agent().get("startupProbe")).get("httpGet")).isEqualTo(loopback);
        assertThat(map(agent().get("readinessProbe")).get("httpGet"))
                .isEqualTo(Map.of("host", "127.0.0.1", "path", "/readyz", "port", 9810));
    }

    /**
     * The agent's own identity: an explicit projected token of 3600 s bound to its pod, not the injected one
     * (3607 s, which an API server extends to a year), with the CA and the namespace client-java reads.
     */
    @Test
    void daemonSet_identityIsAnExplicitShortLivedProjectedToken() {
        assertThat(podSpec()).containsEntry("automountServiceAccountToken", false);
        Map<String, Object> projected = map(volume(podSpec(), "api-access").get("projected"));
        List<Object> sources = list(projected, "sources");

        assertThat(map(sources.get(0))).isEqualTo(Map.of("serviceAccountToken",
                Map.of("path", "token", "expirationSeconds", 3600)));
        assertThat(map(map(sources.get(1)).get("configMap"))).containsEntry("name", "kube-root-ca.crt");
        assertThat(map(sources.get(2))).containsKey("downwardAPI");
        assertThat(sources).hasSize(3);
        assertThat(mount(agent(), "api-access")).isEqualTo(Map.of("name", "api-access",
                "mountPath", "/var/run/secrets/kubernetes.io/serviceaccount", "readOnly", true));
    }

    /** The heap holds tokens: the JVM writes no core file (the image's launcher sets the limit to 0 too). */
    @Test
    void daemonSet_jvmWritesNoCoreDump() {
        assertThat(str(env(agent(), "JAVA_OPTS"), "value")).contains("-XX:-CreateCoredumpOnCrash");
    }

    @Test
    void daemonSet_mountsOnlyThePodsPluginAndRegistrationDirsOfTheKubeletDir_atTheirHostPaths() {
        String kubeletDir = (String) agentConfig().get("kubeletDir");
        assertThat(kubeletDir).isEqualTo("/var/lib/kubelet");
        Map<String, String> hostPaths = new TreeMap<>();
        for (Object v : list(podSpec(), "volumes")) {
            Map<String, Object> volume = map(v);
            if (volume.containsKey("hostPath")) {
                Map<String, Object> hostPath = map(volume.get("hostPath"));
                String path = (String) hostPath.get("path");
                hostPaths.put(path, (String) hostPath.get("type"));
                // the kubelet names target paths, and the agent its sockets, by their host paths
                assertThat(mount(agent(), (String) volume.get("name"))).as(path).containsEntry("mountPath", path);
            }
        }
        // not the whole kubelet dir: it holds the kubelet's keys and every pod's volumes' backing files
        assertThat(hostPaths).isEqualTo(Map.of(
                kubeletDir + "/pods", "Directory",
                kubeletDir + "/plugins/" + DRIVER, "DirectoryOrCreate",
                kubeletDir + "/plugins_registry", "Directory"));
    }

    @Test
    void daemonSet_propagatesMountsBothWaysOnlyInThePodsDir() {
        Map<String, String> propagation = new TreeMap<>();
        for (Object m : list(agent(), "volumeMounts")) {
            Map<String, Object> mount = map(m);
            propagation.put((String) mount.get("name"), (String) mount.getOrDefault("mountPropagation", "None"));
        }
        assertThat(propagation.remove("kubelet-pods")).isEqualTo("Bidirectional");
        assertThat(propagation).isNotEmpty().allSatisfy((name, mode) -> assertThat(mode).as(name).isEqualTo("None"));
        assertThat(mount(agent(), "kubelet-pods")).doesNotContainKey("readOnly");
    }

    @Test
    void daemonSet_isPrivilegedBecauseBidirectionalPropagationNeedsIt_andNothingMore() {
        Map<String, Object> sc = map(agent().get("securityContext"));
        // Kubernetes refuses Bidirectional in a container that is not privileged; privileged gives every
        // capability and no seccomp profile, so listing either would only mislead
        assertThat(sc).isEqualTo(Map.of(
                "privileged", true,
                "runAsUser", 0,
                "runAsGroup", 0,
                "runAsNonRoot", false,
                "readOnlyRootFilesystem", true));
        assertThat(podSpec()).doesNotContainKeys("hostPID", "hostIPC", "hostUsers", "securityContext");
        assertThat(list(podSpec(), "containers")).hasSize(1);
        assertThat(podSpec()).doesNotContainKey("initContainers");
        // a read-only root file system, so the JVM gets a writable /tmp
        assertThat(mount(agent(), "tmp")).containsEntry("mountPath", "/tmp");
        assertThat(volume(podSpec(), "tmp")).containsKey("emptyDir");
    }

    /**
     * Not on tainted nodes, control-plane nodes above all: a privileged agent there would sit beside the cluster's
     * keys. The DaemonSet controller adds the not-ready, unreachable and pressure tolerations itself.
     */
    @Test
    void daemonSet_toleratesNoTaint_soStaysOffControlPlaneNodes_andUpdatesATenthAtATime() {
        Map<String, Object> ds = daemonSet();
        assertThat(podSpec()).doesNotContainKeys("tolerations", "nodeName");
        assertThat(str(podSpec(), "priorityClassName")).isEqualTo("system-node-critical");
        assertThat(map(map(ds.get("spec")).get("updateStrategy")))
                .isEqualTo(Map.of("type", "RollingUpdate", "rollingUpdate", Map.of("maxUnavailable", "10%")));
    }

    @Test
    void daemonSet_requestsMemoryAndLimitsMemoryButNotCpu() {
        Map<String, Object> resources = map(agent().get("resources"));
        assertThat(map(resources.get("requests"))).containsOnlyKeys("cpu", "memory");
        assertThat(map(resources.get("limits"))).containsOnlyKeys("memory");
        // a bounded heap that leaves the other half of the limit to metaspace, code, threads and the tmpfs;
        // an OutOfMemoryError ends the process, so the kubelet restarts it
        String javaOpts = str(env(agent(), "JAVA_OPTS"), "value");
        long heapMiB = Long.parseLong(javaOpts.replaceAll(".*-Xmx(\\d+)m.*", "$1"));
        long limitMiB = Long.parseLong(str(map(resources.get("limits")), "memory").replace("Mi", ""));
        assertThat(javaOpts).contains("-XX:+UseSerialGC", "-XX:+ExitOnOutOfMemoryError");
        assertThat(heapMiB).isPositive().isLessThanOrEqualTo(limitMiB / 2);
        assertThat(env(agent(), "MALLOC_ARENA_MAX")).containsEntry("value", "2");
    }

    @Test
    void consumer_asksForTwoTokensWithAReadOnlyInlineVolumeOfTheAgentsDriver() throws InvalidProjectionException {
        Map<String, Object> spec = consumerSpec();
        Map<String, Object> reader = map(list(spec, "containers").get(0));
        Map<String, Object> csi = map(volume(spec, "tokens").get("csi"));

        assertThat(csi).containsEntry("driver", DRIVER).containsEntry("readOnly", true);
        // the agent's own parser: the example's list is valid by the agent's rules
        List<ProjectionSpec> projections = ProjectionAnnotation.parse(str(csi, "volumeAttributes", "projections"));
        assertThat(projections).extracting(ProjectionSpec::path).containsExactly("vault/token", "sts/token");
        assertThat(projections).extracting(ProjectionSpec::audience)
                .containsExactly("https://vault.example.com", "sts.amazonaws.com");
        assertThat(projections.get(1).expirationSeconds()).isEqualTo(7200);
        // the volume says nothing about which pod or ServiceAccount: the kubelet tells the agent
        assertThat(map(csi.get("volumeAttributes"))).containsOnlyKeys("projections");
        assertThat(mount(reader, "tokens")).isEqualTo(Map.of(
                "name", "tokens", "mountPath", "/var/run/secrets/satoken", "readOnly", true));
        assertThat(reader).doesNotContainKey("env");
        assertThat(map(spec.get("securityContext"))).containsEntry("runAsUser", 1000).containsEntry("fsGroup", 2000);
    }

    /** What the restricted Pod Security level (Kubernetes 1.30) checks in a pod, as it applies to this one. */
    @Test
    void consumer_meetsTheRestrictedPodSecurityLevel() {
        Map<String, Object> spec = consumerSpec();
        Set<String> restrictedVolumeTypes = Set.of("configMap", "csi", "downwardAPI", "emptyDir", "ephemeral",
                "persistentVolumeClaim", "projected", "secret");

        Map<String, Object> podSc = map(spec.get("securityContext"));
        assertThat(podSc).containsEntry("runAsNonRoot", true)
                .containsEntry("seccompProfile", Map.of("type", "RuntimeDefault"));
        assertThat(podSc.get("runAsUser")).isNotEqualTo(0);
        assertThat(spec).doesNotContainKeys("hostNetwork", "hostPID", "hostIPC");
        for (Object v : list(spec, "volumes")) {
            Set<String> type = new TreeSet<>(map(v).keySet());
            type.remove("name");
            assertThat(restrictedVolumeTypes).as("volume " + map(v).get("name")).containsAll(type);
        }
        for (Object c : list(spec, "containers")) {
            Map<String, Object> sc = map(map(c).get("securityContext"));
            assertThat(sc).as(String.valueOf(map(c).get("name")))
                    .containsEntry("allowPrivilegeEscalation", false)
                    .containsEntry("capabilities", Map.of("drop", List.of("ALL")))
                    // nothing that would override the pod's non-root, seccomp or unprivileged settings
                    .doesNotContainKeys("privileged", "runAsUser", "runAsNonRoot", "seccompProfile");
        }
        assertThat(spec).doesNotContainKeys("initContainers", "ephemeralContainers");
    }

    @Test
    void kustomization_listsEveryManifest_inNameOrder_andNothingElse() throws IOException {
        Map<String, Object> kustomization = load(DEPLOY.resolve(KUSTOMIZATION));
        List<String> names = new java.util.ArrayList<>(topLevelFiles().stream().map(f -> f.getFileName().toString())
                .toList());
        // the agent's ServiceAccount, a base of its own (the control plane's bases read it), after the namespace
        names.add(1, "identity");
        assertThat(DEPLOY.resolve("identity/serviceaccount.yaml")).isRegularFile();

        assertThat(list(kustomization, "resources")).containsExactlyElementsOf(names);
        // no patches, generators or inline images: what the files say is what is applied, but the image
        assertThat(kustomization).containsOnlyKeys("apiVersion", "kind", "resources", "components");
    }

    @Test
    void image_isNamedShort_andTheSharedComponentGivesItsNameAndThisBuildsVersion() throws IOException {
        Map<String, Object> kustomization = load(DEPLOY.resolve(KUSTOMIZATION));
        Map<String, Object> container = map(list(podSpec(), "containers").get(0));
        Map<String, Object> image = list(load(IMAGES), "images").stream().map(YamlTrees::map)
                .filter(i -> "satoken-agent".equals(i.get("name"))).findFirst().orElseThrow();

        assertThat(list(kustomization, "components")).containsExactly("../../deploy/images",
                "../../deploy/agent-identity");
        assertThat(container.get("image")).isEqualTo("satoken-agent");
        // mvn -Pimages package tags the image it builds with the project's version
        assertThat(image).containsEntry("newName", "ghcr.io/satoken/satoken-agent")
                .containsEntry("newTag", BuildVersion.current().version());
    }

    // --- navigation ---

    private static Map<String, Object> load(Path file) throws IOException {
        try (Reader reader = Files.newBufferedReader(file)) {
            return map(yaml().load(reader));
        }
    }

    private static Yaml yaml() {
        return new Yaml(new SafeConstructor(new LoaderOptions()));
    }

    private static List<Path> yamlFiles() throws IOException {
        try (Stream<Path> files = Files.walk(DEPLOY)) {
            // alerts/ holds Prometheus rules, not Kubernetes objects (AlertRulesE2E checks them)
            // kustomization.yaml is kustomize's, not an object (kustomization_* checks it)
            return files.filter(f -> f.toString().endsWith(".yaml") || f.toString().endsWith(".yml"))
                    .filter(f -> !f.startsWith(DEPLOY.resolve("alerts")))
                    .filter(f -> !f.getFileName().toString().equals(KUSTOMIZATION)).sorted().toList();
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

    private static Map<String, Object> consumerSpec() {
        return map(one("Pod", "satoken-consumer").get("spec"));
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
        List<Map<String, Object>> found = items.stream().map(YamlTrees::map)
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

}
