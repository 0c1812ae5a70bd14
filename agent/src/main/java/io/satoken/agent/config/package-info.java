/**
 * Static mode's config file. {@link AgentConfigParser} reads it, with the YAML, field-error and path rules of
 * {@code io.satoken.common.projection}, into an {@link AgentConfig} (the mode and its {@link StaticProjection}s,
 * grouped into {@code projection.TokenDirectory}s), {@code ProjectionEntries} reading the projections entry by
 * entry; names are checked as Kubernetes checks them
 * (common's {@code KubeNames}), and every error is reported at once in an {@link InvalidConfigException}.
 */
package io.satoken.agent.config;
