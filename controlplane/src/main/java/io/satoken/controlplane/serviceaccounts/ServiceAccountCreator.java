package io.satoken.controlplane.serviceaccounts;

import io.kubernetes.client.openapi.ApiException;

/** The one API call the ServiceAccounts controller makes; the seam its tests record through. */
@FunctionalInterface
interface ServiceAccountCreator {

    /** Creates a ServiceAccount with only a name (SC-3). */
    void create(String namespace, String name) throws ApiException;
}
