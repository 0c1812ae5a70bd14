package io.satoken.controlplane.rootca;

import io.kubernetes.client.informer.cache.Lister;
import io.kubernetes.client.openapi.ApiClient;
import io.kubernetes.client.openapi.models.V1ConfigMap;
import io.kubernetes.client.openapi.models.V1Namespace;
import io.satoken.controlplane.controller.ControllerLoop;
import io.satoken.controlplane.controller.ControllerMetrics;
import io.satoken.controlplane.controller.EventHandlers;
import io.satoken.controlplane.kube.Informers;
import io.satoken.controlplane.controller.LoopController;
import io.satoken.controlplane.controller.Namespaces;
import java.nio.charset.StandardCharsets;
import java.util.Optional;

/**
 * The root-CA publisher ({@code root-ca}, spec 8): ConfigMap {@code kube-root-ca.crt} with exactly
 * {@code ca.crt} in every namespace, repaired when edited or deleted. Triggers (RC-2): a namespace added,
 * a namespace updated while Active, our ConfigMap updated or deleted.
 */
public final class RootCaPublisher extends LoopController {

    public static final String NAME = "root-ca";

    private final ControllerLoop<String> loop;

    public RootCaPublisher(Informers informers, ApiClient client, byte[] rootCa, int workers,
            ControllerMetrics metrics) {
        super(NAME);
        RootCaSync sync = new RootCaSync(new Lister<>(informers.rootCaConfigMaps().getIndexer()),
                new ApiConfigMapWriter(client), new String(rootCa, StandardCharsets.UTF_8));
        this.loop = addLoop(NAME, sync, workers, ControllerLoop.UNLIMITED_RETRIES, metrics);
        informers.namespaces().addEventHandler(EventHandlers.of(
                ns -> Triggers.namespaceAdded(ns).ifPresent(loop::enqueue),
                (before, after) -> Triggers.namespaceUpdated(after).ifPresent(loop::enqueue),
                EventHandlers.ignore()));
        informers.rootCaConfigMaps().addEventHandler(EventHandlers.of(
                EventHandlers.ignore(),
                (before, after) -> Triggers.configMapChanged(after).ifPresent(loop::enqueue),
                cm -> Triggers.configMapChanged(cm).ifPresent(loop::enqueue)));
    }

    /** RC-2: which events queue which namespace. */
    static final class Triggers {

        private Triggers() {
        }

        /** Any new namespace, whatever its phase. */
        static Optional<String> namespaceAdded(V1Namespace ns) {
            return Optional.of(ns.getMetadata().getName());
        }

        /** An updated namespace only while Active: a terminating one is left alone. */
        static Optional<String> namespaceUpdated(V1Namespace ns) {
            return Namespaces.active(ns) ? Optional.of(ns.getMetadata().getName()) : Optional.empty();
        }

        /** An update or delete of our ConfigMap; other ConfigMaps are not ours to watch. */
        static Optional<String> configMapChanged(V1ConfigMap cm) {
            return Informers.ROOT_CA_CONFIGMAP.equals(cm.getMetadata().getName())
                    ? Optional.of(cm.getMetadata().getNamespace()) : Optional.empty();
        }
    }
}
