package io.satoken.agent.runtime;

import io.kubernetes.client.openapi.ApiException;
import io.kubernetes.client.openapi.apis.CoreV1Api;
import io.kubernetes.client.openapi.apis.RbacAuthorizationV1Api;
import io.kubernetes.client.openapi.models.V1ClusterRole;
import io.kubernetes.client.openapi.models.V1ClusterRoleBinding;
import io.kubernetes.client.openapi.models.V1Namespace;
import io.kubernetes.client.openapi.models.V1ObjectMeta;
import io.kubernetes.client.openapi.models.V1ServiceAccount;
import io.kubernetes.client.util.Yaml;
import io.satoken.common.testing.KubeApiServer;
import java.io.File;
import java.io.IOException;

/**
 * Installs the agent's ServiceAccount, ClusterRole and binding from {@code agent/deploy/10-rbac.yaml}
 * itself, so real-API tests run the agent with exactly the permissions the manifests grant. Public for
 * the load driver in {@code io.satoken.agent.bench}; like the tests, it runs in the agent module's dir.
 */
public final class AgentRbac {
    public static final String NAMESPACE = "satoken-system";
    public static final String NAME = "satoken-agent";
    private static final File MANIFEST = new File("deploy/10-rbac.yaml");

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
        CoreV1Api core = new CoreV1Api(server.adminClient());
        RbacAuthorizationV1Api rbac = new RbacAuthorizationV1Api(server.adminClient());
        ignoreConflict(() -> core.createNamespace(new V1Namespace().metadata(new V1ObjectMeta().name(NAMESPACE))).execute());
        for (Object o : Yaml.loadAll(MANIFEST)) {
            if (o instanceof V1ServiceAccount sa) {
                ignoreConflict(() -> core.createNamespacedServiceAccount(NAMESPACE, sa).execute());
            } else if (o instanceof V1ClusterRole role) {
                ignoreConflict(() -> rbac.createClusterRole(role).execute());
            } else if (o instanceof V1ClusterRoleBinding binding) {
                ignoreConflict(() -> rbac.createClusterRoleBinding(binding).execute());
            } else {
                throw new IllegalStateException("unexpected object in " + MANIFEST + ": " + o.getClass());
            }
        }
    }

    private interface Call {
        Object run() throws ApiException;
    }

    private static void ignoreConflict(Call call) throws ApiException {
        try {
            call.run();
        } catch (ApiException e) {
            if (e.getCode() != 409) {
                throw e;
            }
        }
    }
}
