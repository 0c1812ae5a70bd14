package io.satoken.controlplane.serviceaccounts;

import static io.satoken.controlplane.controller.Reconciler.Result.DONE;
import static io.satoken.controlplane.controller.Reconciler.Result.RETRY;

import io.kubernetes.client.informer.cache.Lister;
import io.kubernetes.client.openapi.ApiException;
import io.kubernetes.client.openapi.models.V1Namespace;
import io.kubernetes.client.openapi.models.V1ServiceAccount;
import io.satoken.common.kube.Failures;
import io.satoken.controlplane.kube.ApiErrors;
import io.satoken.controlplane.controller.Namespaces;
import io.satoken.controlplane.controller.Reconciler;
import java.util.List;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** The ServiceAccounts controller's sync (spec 6): every Active namespace gets the required accounts. */
final class ServiceAccountsSync implements Reconciler<String> {

    private static final Logger log = LoggerFactory.getLogger(ServiceAccountsSync.class);

    private final Lister<V1Namespace> namespaces;
    private final Lister<V1ServiceAccount> serviceAccounts;
    private final ServiceAccountCreator api;
    private final List<String> required;

    /**
     * @param required the accounts every namespace gets, in the order they are created (SC-1: {@code [default]})
     */
    ServiceAccountsSync(Lister<V1Namespace> namespaces, Lister<V1ServiceAccount> serviceAccounts,
            ServiceAccountCreator api, List<String> required) {
        this.namespaces = namespaces;
        this.serviceAccounts = serviceAccounts;
        this.api = api;
        this.required = List.copyOf(required);
    }

    /** SC-3, SC-4: create what is missing; never update or delete. */
    @Override
    public Result reconcile(String namespace) {
        V1Namespace ns = namespaces.get(namespace);
        if (ns == null || !Namespaces.active(ns)) {
            return DONE;
        }
        boolean failed = false;
        for (String name : required) {
            if (serviceAccounts.namespace(namespace).get(name) != null) {
                continue;
            }
            try {
                api.create(namespace, name);
                log.info("created serviceaccount {}/{}", namespace, name);
            } catch (ApiException e) {
                if (ApiErrors.isAlreadyExists(e) || ApiErrors.hasCause(e, ApiErrors.NAMESPACE_TERMINATING_CAUSE)) {
                    continue;
                }
                log.warn("creating serviceaccount {}/{}: {}", namespace, name, Failures.said(e));
                failed = true;
            }
        }
        return failed ? RETRY : DONE;
    }
}
