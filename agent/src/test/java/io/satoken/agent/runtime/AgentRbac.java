package io.satoken.agent.runtime;

import io.kubernetes.client.openapi.ApiException;
import io.kubernetes.client.openapi.apis.CoreV1Api;
import io.kubernetes.client.openapi.models.V1Namespace;
import io.kubernetes.client.openapi.models.V1ObjectMeta;
import io.satoken.common.testing.KubeApiServer;
import io.satoken.common.testing.Manifests;
import java.io.File;
import java.io.IOException;

/**
 * Installs the agent's ServiceAccount ({@code agent/deploy/identity}), ClusterRole and binding from {@code agent/deploy/10-rbac.yaml}
 * itself, so real-API tests run the agent with exactly the permissions the manifests grant. Public for
 * the load driver in {@code io.satoken.agent.bench}; like the tests, it runs in the agent module's dir.
 */
public final class AgentRbac {
    public static final String NAMESPACE = "satoken-system";
    public static final String NAME = "satoken-agent";
    private static final File MANIFEST = new File("deploy/10-rbac.yaml");
    /** The ServiceAccount itself, in the agent's identity base. */
    private static final File IDENTITY = new File("deploy/identity/serviceaccount.yaml");

    private AgentRbac() {
    }

    private static KubeApiServer installedOn;

    /** Applies the manifest (once per server) and returns a token for the agent's ServiceAccount. */
    public static synchronized String token(KubeApiServer server) throws IOException, ApiException {
        if (installedOn != server) {
            apply(server);
            installedOn = server;
        }
        return server.serviceAccountToken(NAMESPACE, NAME);
    }

    private static void apply(KubeApiServer server) throws IOException, ApiException {
        try {
            new CoreV1Api(server.adminClient()).createNamespace(new V1Namespace().metadata(new V1ObjectMeta().name(NAMESPACE)))
                    .execute();
        } catch (ApiException e) {
            if (e.getCode() != 409) {
                throw e;
            }
        }
        Manifests.apply(server, IDENTITY.toPath());
        Manifests.apply(server, MANIFEST.toPath());
    }
}
