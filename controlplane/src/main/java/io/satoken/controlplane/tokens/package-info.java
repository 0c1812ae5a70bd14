/**
 * The legacy tokens controller ({@code tokens}, upstream section 4a): fills token Secrets with a signed token,
 * {@code namespace} and {@code ca.crt}, deletes those whose ServiceAccount is gone, and unlinks deleted ones from
 * their account (TC-1..TC-6); with {@code --legacy-token-auto-create} it also gives every account a token Secret, as
 * v1.17 did (TC-7, {@code TokenSecretCreation}). {@link TokensController} runs two queues, one per kind, and
 * {@link TokenSync} holds both syncs; {@code SecretMutationCache} lets it see its own recent writes. Tokens are signed
 * through {@code jwt.LegacyTokenGenerator}; {@link TokenSecretOwner} is also used by the admission webhook.
 */
package io.satoken.controlplane.tokens;
