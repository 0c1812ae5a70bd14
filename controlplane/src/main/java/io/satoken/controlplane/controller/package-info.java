/**
 * What every controller runs on, kept apart from what each one decides. {@link ControllerLoop} is
 * a rate-limited work queue with workers and a retry limit (TC-2); a controller's sync implements
 * {@link Reconciler} (read from listers, answer done or retry); {@link Controller} is what
 * {@code runtime.ControlplaneRuntime} starts once the caches have synced, and {@link LoopController} the one made of
 * loops that each controller extends. Also here: what the controllers share
 * ({@code ControllerMetrics}, {@code EventHandlers}, {@code DeepCopy}, {@code Namespaces}). The shared informers and
 * {@code ApiErrors}, which the webhook uses too, are in {@code kube}.
 */
package io.satoken.controlplane.controller;
