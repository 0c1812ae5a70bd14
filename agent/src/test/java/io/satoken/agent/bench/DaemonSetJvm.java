package io.satoken.agent.bench;

import io.kubernetes.client.custom.Quantity;
import io.kubernetes.client.openapi.models.V1Container;
import io.kubernetes.client.openapi.models.V1DaemonSet;
import io.kubernetes.client.openapi.models.V1EnvVar;
import io.kubernetes.client.util.Yaml;
import java.io.IOException;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The agent's JVM as the DaemonSet ({@code deploy/30-daemonset.yaml}) runs it, so that a benchmark runs the
 * agent the same way: the container's literal environment ({@code JAVA_OPTS} and the rest; not those taken
 * from the pod, such as {@code NODE_NAME}), with {@code -XX:MaxRAM} standing in for the memory limit, since
 * the JVM sizes itself from the container's limit and a benchmark's process has none.
 */
record DaemonSetJvm(Map<String, String> environment) {

    static DaemonSetJvm read(Path daemonSetFile) throws IOException {
        V1DaemonSet ds = (V1DaemonSet) Yaml.loadAll(daemonSetFile.toFile()).get(0);
        V1Container agent = ds.getSpec().getTemplate().getSpec().getContainers().get(0);
        Map<String, String> env = new LinkedHashMap<>();
        for (V1EnvVar var : agent.getEnv()) {
            if (var.getValue() != null) {
                env.put(var.getName(), var.getValue());
            }
        }
        Quantity limit = agent.getResources().getLimits().get("memory");
        long bytes = limit.getNumber().longValueExact();
        env.put("JAVA_OPTS", ("-XX:MaxRAM=" + bytes / (1024 * 1024) + "m " + env.getOrDefault("JAVA_OPTS", "")).strip());
        return new DaemonSetJvm(Map.copyOf(env));
    }

    String javaOpts() {
        return environment.get("JAVA_OPTS");
    }

    /** The same environment with {@code JAVA_OPTS} replaced (a benchmark's {@code --java-opts}). */
    DaemonSetJvm withJavaOpts(String javaOpts) {
        Map<String, String> env = new LinkedHashMap<>(environment);
        env.put("JAVA_OPTS", javaOpts);
        return new DaemonSetJvm(Map.copyOf(env));
    }
}
