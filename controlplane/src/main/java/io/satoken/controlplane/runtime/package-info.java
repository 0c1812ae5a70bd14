/**
 * The control-plane process, assembled. {@link ControlplaneRuntime} starts the health and metrics server and, when
 * asked for, the admission webhook ({@link AdmissionWebhook}: the paths {@code --webhooks} selects, the informer caches
 * they read, the check of the agent's ServiceAccount and the poll that reloads the serving certificate), in every
 * replica; then, while it holds the Lease (client-java's
 * {@code LeaderElector} on a {@code PatchingLeaseLock}), or at once without leader election, the controllers that
 * {@link ControllerSelection} picked from {@code --controllers}. Losing the Lease ends the process with exit code 1,
 * and the Deployment restarts it. {@code ApiRequestMetrics} counts the process's API requests. Called by
 * {@code cli.RunCommand}.
 */
package io.satoken.controlplane.runtime;
