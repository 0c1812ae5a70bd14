package io.satoken.common.kube;

import static org.assertj.core.api.Assertions.assertThat;

import io.kubernetes.client.openapi.ApiClient;
import io.kubernetes.client.openapi.JSON;
import io.kubernetes.client.openapi.models.AuthenticationV1TokenRequest;
import io.kubernetes.client.openapi.models.V1Pod;
import io.satoken.common.testing.Kubeconfigs;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.Security;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * What building a client and reading API objects loads, in a JVM of its own that logs its class loading
 * ({@link Program}): the classes are the programs' largest memory cost after the heap (BENCHMARKS.md,
 * "Agent footprint"), and nothing else would notice a change of client-java that loads them all again.
 */
class ClientFootprintTest {

    @Test
    void aClientReadingAPodAndATokenRequest_loadsTheModelsItUses_andNoBouncyCastle(@TempDir Path dir)
            throws Exception {
        Path log = dir.resolve("class-load.log");
        Path kubeconfig = Kubeconfigs.withToken(dir.resolve("kubeconfig"), "https://127.0.0.1:6443");
        Process java = new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-Xlog:class+load=info:file=" + log, "-cp", System.getProperty("java.class.path"),
                Program.class.getName(), kubeconfig.toString())
                .redirectErrorStream(true).start();
        String output = new String(java.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(java.waitFor()).as(output).isZero();
        assertThat(output).contains("read pod web, token request of audience vault; BC provider: none");

        List<String> loaded = Files.readAllLines(log);
        // before: one lookup in client-java's own Gson loaded all 717 models, and SSLUtils 420 BouncyCastle classes
        assertThat(loaded.stream().filter(l -> l.contains(" io.kubernetes.client.openapi.models.")
                && !l.contains("$"))).as("model classes loaded").hasSizeBetween(20, 150)
                .noneMatch(l -> l.contains(".V2ResourceMetricStatus ") || l.contains(".V1Deployment "));
        // verifying SSLUtils may load a type its methods name (PemObjectGenerator), nothing more
        assertThat(loaded.stream().filter(l -> l.contains(" org.bouncycastle."))).as("BouncyCastle classes loaded")
                .hasSizeLessThan(5);
    }

    /** Builds a client from a kubeconfig as both programs do, reads and writes a pod and a TokenRequest. */
    static final class Program {

        public static void main(String[] args) throws Exception {
            ApiClient client = KubeClients.fromKubeconfig(Path.of(args[0]));
            V1Pod pod = client.getJSON().deserialize("""
                    {"apiVersion":"v1","kind":"Pod","metadata":{"name":"web","namespace":"ns","uid":"u1",
                     "creationTimestamp":"2026-11-28T10:00:00Z","newField":1},
                     "spec":{"serviceAccountName":"app","containers":[{"name":"c","image":"busybox"}]},
                     "status":{"phase":"Running","resources":{}}}""", V1Pod.class);
            AuthenticationV1TokenRequest request = JSON.deserialize("""
                    {"apiVersion":"authentication.k8s.io/v1","kind":"TokenRequest",
                     "spec":{"audiences":["vault"],"expirationSeconds":3600},
                     "status":{"token":"x","expirationTimestamp":"2026-11-28T11:00:00Z"}}""",
                    AuthenticationV1TokenRequest.class);
            JSON.serialize(pod);
            JSON.serialize(request);
            System.out.println("read pod " + pod.getMetadata().getName() + ", token request of audience "
                    + request.getSpec().getAudiences().get(0) + "; BC provider: "
                    + (Security.getProvider("BC") == null ? "none" : "registered"));
        }
    }
}
