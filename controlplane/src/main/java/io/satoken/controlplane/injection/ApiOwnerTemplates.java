package io.satoken.controlplane.injection;

import io.kubernetes.client.common.KubernetesObject;
import io.kubernetes.client.openapi.ApiClient;
import io.kubernetes.client.openapi.ApiException;
import io.kubernetes.client.openapi.apis.AppsV1Api;
import io.kubernetes.client.openapi.apis.BatchV1Api;
import io.kubernetes.client.openapi.models.V1PodTemplateSpec;
import java.util.function.Function;

/**
 * {@link OwnerTemplates} through the API server: one live GET of the controller. The check caches no controllers:
 * it reads one only for a pod that asks for tokens without having the volume, which is rare.
 */
final class ApiOwnerTemplates implements OwnerTemplates {

    private final AppsV1Api apps;
    private final BatchV1Api batch;

    ApiOwnerTemplates(ApiClient client) {
        this.apps = new AppsV1Api(client);
        this.batch = new BatchV1Api(client);
    }

    @Override
    public Template read(RecreatingOwner kind, String namespace, String name) throws ApiException {
        // the API server always sends spec; a template is required of all but a ReplicaSet
        return switch (kind) {
            case REPLICA_SET -> template(apps.readNamespacedReplicaSet(name, namespace).execute(),
                    o -> o.getSpec().getTemplate());
            case STATEFUL_SET -> template(apps.readNamespacedStatefulSet(name, namespace).execute(),
                    o -> o.getSpec().getTemplate());
            case DAEMON_SET -> template(apps.readNamespacedDaemonSet(name, namespace).execute(),
                    o -> o.getSpec().getTemplate());
            case JOB -> template(batch.readNamespacedJob(name, namespace).execute(), o -> o.getSpec().getTemplate());
        };
    }

    private static <T extends KubernetesObject> Template template(T owner, Function<T, V1PodTemplateSpec> templateOf) {
        V1PodTemplateSpec template = templateOf.apply(owner);
        return new Template(owner.getMetadata().getUid(),
                template == null || template.getMetadata() == null ? null : template.getMetadata().getAnnotations());
    }
}
