/**
 * The root-CA publisher ({@code root-ca}, upstream section 8): a ConfigMap {@code kube-root-ca.crt} holding exactly
 * the CA bundle in every namespace, repaired when it is edited or deleted (RC-1..RC-3). {@link RootCaPublisher}
 * wires the triggers and the loop, {@link RootCaSync} reconciles one namespace, and {@link RootCaBundle} reads
 * {@code --root-ca-file}. API writes go through the {@code ConfigMapWriter} seam.
 */
package io.satoken.controlplane.rootca;
