/**
 * The running agent, assembled in one place. {@link AgentRuntime} builds the pipeline token source, cache, refresh
 * scheduler and writer, the health and metrics server, and then, as the config's mode says, the CSI node plugin
 * ({@code csi.CsiServer}, {@code csi.CsiVolumes}) and the static directories ({@code statics.StaticTokens} and their
 * config watcher). Its constructor starts nothing; {@code start()} and {@code close()} do. It also holds the small
 * adapters that join the parts: the pod reader used by CSI publishes and the listeners that pass the scheduler's
 * reports on to the volumes. Called by {@code cli.RunCommand}, and by tests with their own token source.
 */
package io.satoken.agent.runtime;
