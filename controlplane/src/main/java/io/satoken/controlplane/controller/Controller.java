package io.satoken.controlplane.controller;

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
