package io.satoken.e2e;

import io.kubernetes.client.openapi.ApiException;
import io.kubernetes.client.openapi.apis.CoreV1Api;
import io.kubernetes.client.openapi.apis.RbacAuthorizationV1Api;
import io.kubernetes.client.openapi.models.AuthenticationV1TokenRequest;
import io.kubernetes.client.openapi.models.V1BoundObjectReference;
import io.kubernetes.client.openapi.models.V1ClusterRole;
import io.kubernetes.client.openapi.models.V1ClusterRoleBinding;
import io.kubernetes.client.openapi.models.V1Namespace;
import io.kubernetes.client.openapi.models.V1ObjectMeta;
import io.kubernetes.client.openapi.models.V1Pod;
import io.kubernetes.client.openapi.models.V1TokenRequestSpec;
import io.kubernetes.client.util.Yaml;
import io.satoken.common.testing.KubeApiServer;
import io.satoken.common.testing.Manifests;
import java.io.IOException;
import java.nio.file.Path;
import java.util.List;

/**
 * Gives a CSI-mode agent exactly the identity the DaemonSet gives it: the ServiceAccount, ClusterRole and
 * binding of {@code agent/deploy/10-rbac.yaml}, applied to the server, and a kubeconfig holding a token
 * of that ServiceAccount (recorded in {@link IssuedTokens}, since it is a token the suite saw); or, where a
 * webhook confines the agent to its node, a token bound to the DaemonSet's pod on the node.
 */
final class AgentIdentity {

    static final String NAMESPACE = "satoken-system";
    static final String SERVICE_ACCOUNT = "satoken-agent";

    private AgentIdentity() {
    }

    /** Creates the agent's namespace, unless it exists. */
    private static void createNamespace(KubeApiServer server) throws ApiException {
        try {
            new CoreV1Api(server.adminClient())
                    .createNamespace(new V1Namespace().metadata(new V1ObjectMeta().name(NAMESPACE))).execute();
        } catch (ApiException e) {
            if (e.getCode() != 409) {
                throw e;
            }
        }
    }

    /** Applies the agent's RBAC manifest and writes a kubeconfig (mode 0600) acting as the agent. */
    static Path kubeconfig(KubeApiServer server, Path file) throws IOException, ApiException {
        createNamespace(server);
        Manifests.apply(server, E2E.repo().resolve("agent/deploy/identity/serviceaccount.yaml"));
        Manifests.apply(server, E2E.repo().resolve("agent/deploy/10-rbac.yaml"));
        server.writeKubeconfig(file, IssuedTokens.record(server.serviceAccountToken(NAMESPACE, SERVICE_ACCOUNT)));
        return file;
    }

    /**
     * The agent as the node-impersonation profile (deploy/profiles/node-impersonation) installs it: its namespace and
     * ServiceAccount, the profile's ClusterRole (then the base's binding of it), and the nodes' audience grant with its
     * list set to {@code audiences}, as a user edits it; a kubeconfig (mode 0600) holding a token bound to the agent's
     * pod on {@code node}, which names that node.
     */
    static Path nodeImpersonation(KubeApiServer server, Path file, String node, List<String> audiences)
            throws IOException, ApiException {
        createNamespace(server);
        Path profile = E2E.repo().resolve("deploy/profiles/node-impersonation");
        Manifests.apply(server, E2E.repo().resolve("agent/deploy/identity/serviceaccount.yaml"));
        // the profile's ClusterRole first: the base's file then adds only its binding (Manifests keeps what exists)
        Manifests.apply(server, profile.resolve("rbac.yaml"));
        Manifests.apply(server, E2E.repo().resolve("agent/deploy/10-rbac.yaml"));
        RbacAuthorizationV1Api rbac = new RbacAuthorizationV1Api(server.adminClient());
        for (Object o : Yaml.loadAll(profile.resolve("token-audiences.yaml").toFile())) {
            if (o instanceof V1ClusterRole role) {
                role.getRules().get(0).setResources(audiences);
                rbac.createClusterRole(role).execute();
            } else {
                rbac.createClusterRoleBinding((V1ClusterRoleBinding) o).execute();
            }
        }
        server.writeKubeconfig(file, podBoundToken(server, node));
        return file;
    }

    /**
     * Creates the DaemonSet's pod on {@code node} (through whatever admission the server runs) and returns a
     * token of the agent's ServiceAccount bound to it, as kubelet projects one: what node confinement (NT-1)
     * requires. Needs {@code agent/deploy}'s namespace and RBAC applied.
     */
    static String podBoundToken(KubeApiServer server, String node) throws ApiException {
        CoreV1Api admin = new CoreV1Api(server.adminClient());
        V1Pod pod = WholeFlowE2E.pod("satoken-agent-" + node, node);
        pod.getSpec().serviceAccountName(SERVICE_ACCOUNT);
        pod = admin.createNamespacedPod(NAMESPACE, pod).execute();
        return IssuedTokens.record(admin.createNamespacedServiceAccountToken(SERVICE_ACCOUNT, NAMESPACE,
                new AuthenticationV1TokenRequest().spec(new V1TokenRequestSpec().expirationSeconds(3600L)
                        .boundObjectRef(new V1BoundObjectReference().kind("Pod").apiVersion("v1")
                                .name(pod.getMetadata().getName()).uid(pod.getMetadata().getUid()))))
                .execute().getStatus().getToken());
    }
}
