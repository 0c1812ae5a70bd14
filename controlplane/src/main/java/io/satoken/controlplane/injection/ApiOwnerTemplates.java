package io.satoken.controlplane.injection;

import io.kubernetes.client.openapi.ApiClient;
import io.kubernetes.client.openapi.ApiException;
import io.kubernetes.client.openapi.apis.AppsV1Api;
import io.kubernetes.client.openapi.apis.BatchV1Api;
import io.kubernetes.client.openapi.models.V1ObjectMeta;
import io.kubernetes.client.openapi.models.V1PodTemplateSpec;

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
        return switch (kind) {
            case REPLICA_SET -> {
                var owner = apps.readNamespacedReplicaSet(name, namespace).execute();
                yield template(owner.getMetadata(), owner.getSpec() == null ? null : owner.getSpec().getTemplate());
            }
            case STATEFUL_SET -> {
                var owner = apps.readNamespacedStatefulSet(name, namespace).execute();
                yield template(owner.getMetadata(), owner.getSpec() == null ? null : owner.getSpec().getTemplate());
            }
            case DAEMON_SET -> {
                var owner = apps.readNamespacedDaemonSet(name, namespace).execute();
                yield template(owner.getMetadata(), owner.getSpec() == null ? null : owner.getSpec().getTemplate());
            }
            case JOB -> {
                var owner = batch.readNamespacedJob(name, namespace).execute();
                yield template(owner.getMetadata(), owner.getSpec() == null ? null : owner.getSpec().getTemplate());
            }
        };
    }

    private static Template template(V1ObjectMeta owner, V1PodTemplateSpec template) {
        return new Template(owner.getUid(),
                template == null || template.getMetadata() == null ? null : template.getMetadata().getAnnotations());
    }
}
