package io.satoken.controlplane.controller;

import io.satoken.controlplane.kube.Informers;

/**
 * One named controller. Its constructor registers event handlers on {@link Informers}; {@link #start()}
 * runs its workers once the caches have synced.
 */
public interface Controller extends AutoCloseable {

    String name();

    void start();

    @Override
    void close();
}
