/**
 * The {@code /healthz}, {@code /livez}, {@code /readyz} and {@code /metrics} endpoints of both programs.
 * {@link HealthServer} answers them as Kubernetes components do (200 "ok", or 503 naming the failing checks) on
 * {@code NonBlockingHttpServer}, a small HTTP/1.1 server whose one network thread never blocks, so a client that
 * stalls cannot fail the kubelet's probes. {@code AgentRuntime} and {@code ControlplaneRuntime} build one each, with
 * their own checks and metrics registry. {@link UnixSocketServer} serves a handler's answers on the same server over a
 * Unix domain socket only its owner may connect to, for a local status endpoint; {@link UnixSocketClient} asks it.
 */
package io.satoken.common.health;
