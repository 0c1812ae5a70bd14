package io.satoken.controlplane.serviceaccounts;

import io.kubernetes.client.informer.cache.Lister;
import io.kubernetes.client.openapi.ApiClient;
import io.kubernetes.client.openapi.apis.CoreV1Api;
import io.kubernetes.client.openapi.models.V1ObjectMeta;
import io.kubernetes.client.openapi.models.V1ServiceAccount;
import io.satoken.controlplane.controller.ControllerLoop;
import io.satoken.controlplane.controller.ControllerMetrics;
import io.satoken.controlplane.controller.EventHandlers;
import io.satoken.controlplane.kube.Informers;
import io.satoken.controlplane.controller.LoopController;
import java.util.List;

/**
 * The ServiceAccounts controller ({@code serviceaccounts}, spec 6): a {@code default} ServiceAccount in every
 * Active namespace, recreated when deleted. Namespace adds and updates, and ServiceAccount deletes, queue the
 * namespace (SC-2).
 */
public final class ServiceAccountsController extends LoopController {

    public static final String NAME = "serviceaccounts";
    static final List<String> REQUIRED = List.of("default");

    private final ControllerLoop<String> loop;

    public ServiceAccountsController(Informers informers, ApiClient client, int workers, ControllerMetrics metrics) {
        super(NAME);
        CoreV1Api core = new CoreV1Api(client);
        ServiceAccountsSync sync = new ServiceAccountsSync(new Lister<>(informers.namespaces().getIndexer()),
                new Lister<>(informers.serviceAccounts().getIndexer()),
                (ns, name) -> core.createNamespacedServiceAccount(ns,
                        new V1ServiceAccount().metadata(new V1ObjectMeta().name(name).namespace(ns))).execute(),
                REQUIRED);
        this.loop = addLoop(NAME, sync, workers, ControllerLoop.UNLIMITED_RETRIES, metrics);
        informers.namespaces().addEventHandler(EventHandlers.of(
                ns -> loop.enqueue(ns.getMetadata().getName()), EventHandlers.ignore()));
        informers.serviceAccounts().addEventHandler(EventHandlers.of(
                EventHandlers.ignore(), sa -> loop.enqueue(sa.getMetadata().getNamespace())));
    }
}
