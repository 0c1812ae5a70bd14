package io.satoken.common.testing;

import io.kubernetes.client.openapi.models.V1Container;
import io.kubernetes.client.openapi.models.V1DaemonSet;
import io.kubernetes.client.openapi.models.V1Deployment;
import io.kubernetes.client.openapi.models.V1EnvVar;
import io.kubernetes.client.openapi.models.V1PodTemplateSpec;
import io.kubernetes.client.util.Yaml;
import java.io.IOException;
import java.nio.file.Path;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * A container's JVM as a deploy manifest (a DaemonSet's or a Deployment's {@code 30-*.yaml}) runs it, so that a
 * load driver runs the program the same way: the container's literal environment ({@code JAVA_OPTS} and the
 * rest; not those taken from the pod, such as {@code NODE_NAME}), in the manifest's order, with
 * {@code -XX:MaxRAM} first in {@code JAVA_OPTS} standing in for the memory limit, since the JVM sizes itself
 * from the container's limit and a driver's process has none.
 */
public record ContainerJvm(Map<String, String> environment) {

    public static final String JAVA_OPTS = "JAVA_OPTS";

    /** The container {@code container} of the workload that is the first document of {@code manifest}. */
    public static ContainerJvm read(Path manifest, String container) throws IOException {
        Object workload = Yaml.loadAll(manifest.toFile()).get(0);
        V1PodTemplateSpec template;
        if (workload instanceof V1DaemonSet ds) {
            template = ds.getSpec().getTemplate();
        } else if (workload instanceof V1Deployment deployment) {
            template = deployment.getSpec().getTemplate();
        } else {
            throw new IllegalStateException(manifest + ": a DaemonSet or Deployment first, got " + workload.getClass());
        }
        V1Container c = template.getSpec().getContainers().stream().filter(each -> each.getName().equals(container))
                .findFirst().orElseThrow(() -> new IllegalStateException(manifest + ": no container " + container));
        Map<String, String> env = new LinkedHashMap<>();
        for (V1EnvVar var : c.getEnv() == null ? List.<V1EnvVar>of() : c.getEnv()) {
            if (var.getValue() != null) {
                env.put(var.getName(), var.getValue());
            }
        }
        long limit = c.getResources().getLimits().get("memory").getNumber().longValueExact();
        env.put(JAVA_OPTS, ("-XX:MaxRAM=" + limit / (1024 * 1024) + "m " + env.getOrDefault(JAVA_OPTS, "")).strip());
        return new ContainerJvm(env);
    }

    public ContainerJvm {
        environment = Collections.unmodifiableMap(new LinkedHashMap<>(environment));
    }

    public String javaOpts() {
        return environment.get(JAVA_OPTS);
    }

    /** The same environment with {@code JAVA_OPTS} replaced (a driver's {@code --java-opts}). */
    public ContainerJvm withJavaOpts(String javaOpts) {
        Map<String, String> env = new LinkedHashMap<>(environment);
        env.put(JAVA_OPTS, javaOpts);
        return new ContainerJvm(env);
    }

    /** The environment without {@code JAVA_OPTS}, by name: for a driver that puts the options on the command. */
    public Map<String, String> otherEnvironment() {
        Map<String, String> others = new TreeMap<>(environment);
        others.remove(JAVA_OPTS);
        return others;
    }
}
