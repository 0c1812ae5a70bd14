/**
 * The agent's Prometheus metrics, all defined in {@link AgentMetrics}, whose class comment is the table of names and
 * labels (docs/operations.md says the same). It times and counts TokenRequests by wrapping the token source
 * ({@code metered}), reads gauges from the cache and the scheduler, and hears of writes and failures as a
 * {@link io.satoken.agent.refresh.RefreshListener}. Its registry ({@code common.metrics.ProgramRegistry}) is served
 * on {@code /metrics} by the health server; {@code runtime.AgentRuntime} builds and wires it.
 */
package io.satoken.agent.metrics;
