package io.satoken.controlplane.controller;

import io.kubernetes.client.openapi.models.V1Namespace;

/** The one namespace fact two controllers decide on: whether it is Active (not Terminating, SC-3 and RC-2). */
public final class Namespaces {

    private Namespaces() {
    }

    public static boolean active(V1Namespace ns) {
        return ns.getStatus() != null && "Active".equals(ns.getStatus().getPhase());
    }
}
