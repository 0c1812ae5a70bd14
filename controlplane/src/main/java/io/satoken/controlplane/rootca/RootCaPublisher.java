package io.satoken.controlplane.rootca;

import io.kubernetes.client.informer.cache.Lister;
import io.kubernetes.client.openapi.ApiClient;
import io.kubernetes.client.openapi.apis.CoreV1Api;
import io.kubernetes.client.openapi.models.V1ConfigMap;
import io.kubernetes.client.openapi.models.V1Namespace;
import io.satoken.controlplane.controller.Controller;
import io.satoken.controlplane.controller.ControllerLoop;
import io.satoken.controlplane.controller.ControllerMetrics;
import io.satoken.controlplane.controller.EventHandlers;
import io.satoken.controlplane.controller.Informers;
import java.nio.charset.StandardCharsets;

/**
 * The root-CA publisher ({@code root-ca}, spec 8): ConfigMap {@code kube-root-ca.crt} with exactly
 * {@code ca.crt} in every namespace, repaired when edited or deleted. Triggers (RC-2): a namespace added,
 * a namespace updated while Active, our ConfigMap updated or deleted.
 */
public final class RootCaPublisher implements Controller {

    public static final String NAME = "root-ca";

    private final ControllerLoop<String> loop;

    public RootCaPublisher(Informers informers, ApiClient client, byte[] rootCa, int workers,
            ControllerMetrics metrics) {
        CoreV1Api core = new CoreV1Api(client);
        RootCaSync sync = new RootCaSync(new Lister<>(informers.rootCaConfigMaps().getIndexer()), new ConfigMapWriter() {
            @Override
            public void create(V1ConfigMap cm) throws io.kubernetes.client.openapi.ApiException {
                core.createNamespacedConfigMap(cm.getMetadata().getNamespace(), cm).execute();
            }

            @Override
            public void update(V1ConfigMap cm) throws io.kubernetes.client.openapi.ApiException {
                core.replaceNamespacedConfigMap(cm.getMetadata().getName(), cm.getMetadata().getNamespace(), cm)
                        .execute();
            }
        }, new String(rootCa, StandardCharsets.UTF_8));
        this.loop = new ControllerLoop<>(NAME, sync, workers, ControllerLoop.UNLIMITED_RETRIES, metrics);
        informers.namespaces().addEventHandler(EventHandlers.of(
                ns -> loop.enqueue(ns.getMetadata().getName()),
                (before, after) -> {
                    if (active(after)) {
                        loop.enqueue(after.getMetadata().getName());
                    }
                },
                EventHandlers.ignore()));
        informers.rootCaConfigMaps().addEventHandler(EventHandlers.of(
                EventHandlers.ignore(),
                (before, after) -> loop.enqueue(after.getMetadata().getNamespace()),
                cm -> loop.enqueue(cm.getMetadata().getNamespace())));
    }

    static boolean active(V1Namespace ns) {
        return ns.getStatus() != null && "Active".equals(ns.getStatus().getPhase());
    }

    @Override
    public String name() {
        return NAME;
    }

    @Override
    public void start() {
        loop.start();
    }

    @Override
    public void close() {
        loop.close();
    }
}
