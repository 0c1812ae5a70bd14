/**
 * The Prometheus registry both programs serve on {@code /metrics}: {@link ProgramRegistry} holds a program's own
 * meters plus the JVM's, the machine's and the standard {@code process_*} set, which {@link ProcessMetrics} reads
 * from {@code /proc/self}. Each program registers its own metrics on top (the agent's {@code AgentMetrics}, the
 * control plane's controller and webhook metrics).
 */
package io.satoken.common.metrics;
