/**
 * The {@code satoken-controlplane} command line, on picocli: {@link ControlplaneCommand} and its subcommands.
 * {@link RunCommand} checks every flag, those of disabled parts too, and reads every key, certificate and CA file
 * before it touches the cluster, reporting all errors at once (exit 2); it then builds the signer, the root-CA bundle,
 * the webhook settings (its flags, checked by {@link WebhookOptions}) and the controller selection, and runs a {@code runtime.ControlplaneRuntime}.
 * {@code validate} stops after the checks. Shared command-line plumbing is in {@code io.satoken.common.cli}.
 */
package io.satoken.controlplane.cli;
