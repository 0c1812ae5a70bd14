package io.satoken.common.testing;

import io.kubernetes.client.openapi.ApiClient;
import io.kubernetes.client.openapi.ApiException;
import io.kubernetes.client.openapi.apis.CoreV1Api;
import io.kubernetes.client.openapi.apis.RbacAuthorizationV1Api;
import io.kubernetes.client.openapi.models.V1ClusterRole;
import io.kubernetes.client.openapi.models.V1ClusterRoleBinding;
import io.kubernetes.client.openapi.models.V1Namespace;
import io.kubernetes.client.openapi.models.V1Role;
import io.kubernetes.client.openapi.models.V1RoleBinding;
import io.kubernetes.client.openapi.models.V1ServiceAccount;
import io.kubernetes.client.util.Yaml;
import java.io.IOException;
import java.nio.file.Path;

/**
 * Creates the objects of a deploy manifest (namespaces, ServiceAccounts and RBAC) on a test server, so
 * real-API tests run a process with exactly the permissions its manifests grant. Objects that already
 * exist are left as they are.
 */
public final class Manifests {

    private Manifests() {
    }

    public static void apply(KubeApiServer server, Path manifest) throws IOException, ApiException {
        ApiClient admin = server.adminClient();
        CoreV1Api core = new CoreV1Api(admin);
        RbacAuthorizationV1Api rbac = new RbacAuthorizationV1Api(admin);
        for (Object o : Yaml.loadAll(manifest.toFile())) {
            if (o instanceof V1Namespace ns) {
                ignoreConflict(() -> core.createNamespace(ns).execute());
            } else if (o instanceof V1ServiceAccount sa) {
                ignoreConflict(() -> core.createNamespacedServiceAccount(sa.getMetadata().getNamespace(), sa).execute());
            } else if (o instanceof V1ClusterRole role) {
                ignoreConflict(() -> rbac.createClusterRole(role).execute());
            } else if (o instanceof V1ClusterRoleBinding binding) {
                ignoreConflict(() -> rbac.createClusterRoleBinding(binding).execute());
            } else if (o instanceof V1Role role) {
                ignoreConflict(() -> rbac.createNamespacedRole(role.getMetadata().getNamespace(), role).execute());
            } else if (o instanceof V1RoleBinding binding) {
                ignoreConflict(() -> rbac.createNamespacedRoleBinding(binding.getMetadata().getNamespace(), binding)
                        .execute());
            } else if (o instanceof io.kubernetes.client.openapi.models.V1CSIDriver driver) {
                ignoreConflict(() -> new io.kubernetes.client.openapi.apis.StorageV1Api(admin).createCSIDriver(driver)
                        .execute());
            } else {
                throw new IllegalStateException("unexpected object in " + manifest + ": " + o.getClass());
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
