package io.satoken.agent.token;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.kubernetes.client.openapi.ApiClient;
import io.kubernetes.client.openapi.apis.CoreV1Api;
import io.kubernetes.client.openapi.models.AuthenticationV1TokenRequest;
import io.kubernetes.client.openapi.models.V1Node;
import io.kubernetes.client.openapi.models.V1ObjectMeta;
import io.kubernetes.client.openapi.models.V1Pod;
import io.kubernetes.client.openapi.models.V1TokenRequestSpec;
import io.satoken.common.kube.KubeClients;
import io.satoken.common.testing.KubeApiServer;
import io.satoken.common.testing.RequiresKubeApiServer;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The probe against a real API server where the agent may not act as its node: the shared test server, whatever its
 * version, with no grant of the node-impersonation profile. The agent must refuse to start, naming the version and
 * the alternatives; what it found differs by version (1.26/1.27 serve no SelfSubjectReview v1, 1.28-1.35 know no
 * associated-node impersonation, 1.36 needs the profile's ClusterRole).
 */
@RequiresKubeApiServer
class NodeImpersonationRefusedIT {

    @TempDir
    Path dir;

    @Test
    void withoutTheProfilesGrant_refusedOnEveryVersion_namingVersionAndAlternatives(KubeApiServer server)
            throws Exception {
        CoreV1Api admin = new CoreV1Api(server.adminClient());
        String node = "refused-" + Long.toHexString(System.nanoTime());
        admin.createNode(new V1Node().metadata(new V1ObjectMeta().name(node))).execute();
        String namespace = server.createNamespace("refused");
        server.createServiceAccount(namespace, "agent");
        V1Pod pod = admin.createNamespacedPod(namespace, NodeImpersonationIT.pod("agent", node, "agent", false))
                .execute();
        String token = admin.createNamespacedServiceAccountToken("agent", namespace, new AuthenticationV1TokenRequest()
                .spec(new V1TokenRequestSpec().expirationSeconds(3600L).audiences(List.of(KubeApiServer.ISSUER))
                        .boundObjectRef(NodeImpersonationIT.boundTo(pod)))).execute().getStatus().getToken();
        Path kubeconfig = dir.resolve("kubeconfig");
        server.writeKubeconfig(kubeconfig, token);
        ApiClient own = KubeClients.fromFlags(kubeconfig);
        ApiClient asNode = NodeImpersonation.asNode(KubeClients.fromFlags(kubeconfig), node);

        assertThatThrownBy(() -> NodeImpersonationProbe.check(NodeImpersonationProbe.api(own, asNode), node))
                .isInstanceOf(NodeImpersonationProbe.Unavailable.class)
                .hasMessageStartingWith("tokenSource: node-impersonation cannot be used with this API server"
                        + " (Kubernetes " + server.gitVersion() + "): ")
                .hasMessageContaining(NodeImpersonationProbe.ALTERNATIVES)
                .satisfies(e -> System.out.println("NodeImpersonationRefusedIT " + server.gitVersion() + ": "
                        + e.getMessage()));
    }

}
