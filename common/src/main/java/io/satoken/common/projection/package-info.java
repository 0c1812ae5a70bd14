/** The {@code satoken.io/projections} pod annotation parser, shared by the agent (pods, static config) and the controlplane's admission webhook. */
package io.satoken.common.projection;
