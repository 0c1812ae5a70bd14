package io.satoken.common.testing;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class ContainerJvmTest {

    private static final String POD_SPEC = """
                spec:
                  containers:
                    - name: sidecar
                      image: other
                    - name: app
                      image: app
                      env:
                        - name: NODE_NAME
                          valueFrom:
                            fieldRef:
                              fieldPath: spec.nodeName
                        - name: JAVA_OPTS
                          value: -XX:+UseSerialGC -Xss256k
                        - name: MALLOC_ARENA_MAX
                          value: "2"
                      resources:
                        limits:
                          memory: 192Mi
            """;

    @TempDir
    Path dir;

    @Test
    void read_daemonSet_literalEnvironmentWithMaxRamFirst() throws Exception {
        ContainerJvm jvm = ContainerJvm.read(manifest("DaemonSet"), "app");

        assertThat(jvm.environment()).containsExactly(
                Map.entry("JAVA_OPTS", "-XX:MaxRAM=192m -XX:+UseSerialGC -Xss256k"),
                Map.entry("MALLOC_ARENA_MAX", "2"));
        assertThat(jvm.javaOpts()).isEqualTo("-XX:MaxRAM=192m -XX:+UseSerialGC -Xss256k");
    }

    @Test
    void read_deployment_otherEnvironmentLeavesJavaOptsOut() throws Exception {
        ContainerJvm jvm = ContainerJvm.read(manifest("Deployment"), "app");

        assertThat(jvm.otherEnvironment()).isEqualTo(Map.of("MALLOC_ARENA_MAX", "2"));
    }

    @Test
    void withJavaOpts_replacesOnlyJavaOpts() throws Exception {
        ContainerJvm jvm = ContainerJvm.read(manifest("DaemonSet"), "app").withJavaOpts("-Xmx64m");

        assertThat(jvm.environment()).containsExactly(Map.entry("JAVA_OPTS", "-Xmx64m"),
                Map.entry("MALLOC_ARENA_MAX", "2"));
    }

    @Test
    void read_noSuchContainer_namesTheFileAndTheContainer() throws Exception {
        Path manifest = manifest("Deployment");

        assertThatThrownBy(() -> ContainerJvm.read(manifest, "agent"))
                .hasMessage(manifest + ": no container agent");
    }

    private Path manifest(String kind) throws Exception {
        return Files.writeString(dir.resolve(kind + ".yaml"), """
                apiVersion: apps/v1
                kind: %s
                metadata:
                  name: app
                spec:
                  selector:
                    matchLabels:
                      app: app
                  template:
                    metadata:
                      labels:
                        app: app
                %s""".formatted(kind, POD_SPEC));
    }
}
