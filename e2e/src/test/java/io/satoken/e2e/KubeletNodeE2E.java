package io.satoken.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import com.nimbusds.jwt.JWTClaimsSet;
import com.nimbusds.jwt.SignedJWT;
import io.kubernetes.client.openapi.models.V1Capabilities;
import io.kubernetes.client.openapi.models.V1Container;
import io.kubernetes.client.openapi.models.V1ObjectMeta;
import io.kubernetes.client.openapi.models.V1Pod;
import io.kubernetes.client.openapi.models.V1PodSecurityContext;
import io.kubernetes.client.openapi.models.V1PodSpec;
import io.kubernetes.client.openapi.models.V1ProjectedVolumeSource;
import io.kubernetes.client.openapi.models.V1SeccompProfile;
import io.kubernetes.client.openapi.models.V1SecurityContext;
import io.kubernetes.client.openapi.models.V1ServiceAccountTokenProjection;
import io.kubernetes.client.openapi.models.V1Volume;
import io.kubernetes.client.openapi.models.V1VolumeMount;
import io.kubernetes.client.openapi.models.V1VolumeProjection;
import io.satoken.e2e.node.ExecResult;
import io.satoken.e2e.node.KubeletNode;
import io.satoken.e2e.node.RequiresKubeletNode;
import io.satoken.e2e.node.RunningPod;
import io.satoken.e2e.node.TestImages;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.parallel.Execution;
import org.junit.jupiter.api.parallel.ExecutionMode;
import org.junit.jupiter.api.parallel.ResourceLock;

/**
 * The real-node harness itself: a v1.26 kubelet on containerd runs a non-root pod that the
 * {@code restricted} Pod Security level admits, with a kubelet-projected ServiceAccount token (audience
 * {@code vault}, one hour), and the container reads that token through the real mount: kubelet's layout,
 * modes and owners, and a JWT naming the pod and the audience, the same bytes as the file under the
 * kubelet's root dir. Records how long the node took to be Ready and the pod to be Running, the baseline
 * every real-node test builds on.
 */
@Execution(ExecutionMode.CONCURRENT)
@ResourceLock(KubeletNode.RESOURCE)
@RequiresKubeletNode
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class KubeletNodeE2E {

    private static final String TEST = "kubelet-node";
    private static final String TOKEN_DIR = "/var/run/secrets/tokens";

    private KubeletNode node;

    @BeforeAll
    void startNode() throws IOException {
        node = KubeletNode.builder().start();
    }

    @AfterAll
    void closeNode() {
        if (node != null) {
            node.close();
        }
    }

    @Test
    void restrictedPod_readsItsKubeletProjectedToken_throughTheRealMount() throws Exception {
        String namespace = node.createNamespace("node-smoke",
                Map.of("pod-security.kubernetes.io/enforce", "restricted"));

        RunningPod pod = node.runPod(namespace, tokenReader("reader"), Duration.ofSeconds(60));

        ExecResult id = node.exec(namespace, pod.name(), "app", "id");
        assertThat(id.exitCode()).as("id: %s", id.stderr()).isZero();
        assertThat(id.stdout()).contains("uid=1000").contains("2000");

        ExecResult ls = node.exec(namespace, pod.name(), "app", "ls", "-la", TOKEN_DIR);
        assertThat(ls.exitCode()).as("ls: %s", ls.stderr()).isZero();
        System.out.println("kubelet-node: ls -la " + TOKEN_DIR + " in the container:\n" + ls.stdout());
        // AW-1, AW-2, AW-4: the file is a link through ..data into a timestamped directory
        assertThat(ls.stdout()).contains("vault-token -> ..data/vault-token").contains("..data -> ..20");

        // PV-16, PV-17: fsUser (every container runs as 1000) owns it, fsGroup's group reads it
        ExecResult stat = node.exec(namespace, pod.name(), "app", "stat", "-L", "-c", "%a %u %g",
                TOKEN_DIR + "/vault-token");
        assertThat(stat.stdout().strip()).as("mode uid gid").isEqualTo("640 1000 2000");

        ExecResult cat = node.exec(namespace, pod.name(), "app", "cat", TOKEN_DIR + "/vault-token");
        assertThat(cat.exitCode()).as("cat: %s", cat.stderr()).isZero();
        String token = IssuedTokens.record(cat.stdout());
        JWTClaimsSet claims = SignedJWT.parse(token.strip()).getJWTClaimsSet();
        assertThat(claims.getAudience()).containsExactly("vault");
        Map<String, Object> k8s = claims.getJSONObjectClaim("kubernetes.io");
        assertThat(k8s).containsEntry("namespace", namespace);
        assertThat(objectClaim(k8s, "pod")).containsEntry("name", pod.name()).containsEntry("uid", pod.uid());
        assertThat(objectClaim(k8s, "serviceaccount")).containsEntry("name", "default");
        assertThat(JwtClaims.of(token).lifetime()).isEqualTo(Duration.ofHours(1));

        // PV-21: the container read the kubelet's own volume under its root dir
        Path onHost = node.rootDir().resolve("pods").resolve(pod.uid())
                .resolve("volumes/kubernetes.io~projected/vault-token/vault-token");
        assertThat(Files.readString(onHost)).as("the token file on the host").isEqualTo(token);

        Figures.record(TEST, String.format("node Ready %d ms after the kubelet started; restricted pod with a"
                + " projected token Running %d ms after its create", node.readyTime().toMillis(),
                pod.createdToRunning().toMillis()));
    }

    /**
     * A pod the {@code restricted} level admits (non-root, no privilege escalation, no capabilities,
     * RuntimeDefault seccomp) with no automounted token, only a projected one for audience {@code vault}.
     */
    private static V1Pod tokenReader(String name) {
        V1Container app = new V1Container().name("app").image(TestImages.BUSYBOX)
                .command(List.of("sleep", "3600"))
                .securityContext(new V1SecurityContext().allowPrivilegeEscalation(false)
                        .capabilities(new V1Capabilities().drop(List.of("ALL"))))
                .addVolumeMountsItem(new V1VolumeMount().name("vault-token").mountPath(TOKEN_DIR).readOnly(true));
        V1Volume token = new V1Volume().name("vault-token").projected(new V1ProjectedVolumeSource()
                .addSourcesItem(new V1VolumeProjection().serviceAccountToken(new V1ServiceAccountTokenProjection()
                        .audience("vault").expirationSeconds(3600L).path("vault-token"))));
        return new V1Pod().metadata(new V1ObjectMeta().name(name))
                .spec(new V1PodSpec()
                        .serviceAccountName("default")
                        .automountServiceAccountToken(false)
                        .terminationGracePeriodSeconds(1L)
                        .securityContext(new V1PodSecurityContext().runAsNonRoot(true).runAsUser(1000L).fsGroup(2000L)
                                .seccompProfile(new V1SeccompProfile().type("RuntimeDefault")))
                        .addContainersItem(app)
                        .addVolumesItem(token));
    }

    @SuppressWarnings("unchecked")
    private static Map<String, Object> objectClaim(Map<String, Object> claims, String name) {
        assertThat(claims).containsKey(name);
        return (Map<String, Object>) claims.get(name);
    }
}
