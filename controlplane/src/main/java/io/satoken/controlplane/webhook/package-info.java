/**
 * The admission webhook: the rules of {@code admission} served as AdmissionReview v1 on the {@code https} server; it
 * runs in every replica, leader or not. {@code runtime.AdmissionWebhook} assembles and starts it, with the check of
 * the agent's ServiceAccount ({@link AgentAccountCheck}). {@link AdmissionEndpoint} is the server's endpoint: it routes each path to its rule and writes every answer, the
 * server's refusals included, as an AdmissionReview. {@link AdmissionReviews} reads a review ({@code ReviewReader}
 * streams it, keeping only the fields declared under the review's root: its own, and those the views and the rules
 * declare of the object under review) and writes the answer.
 *
 * <p>Depends on {@code admission}, {@code admission.view} and {@code https}; nothing there depends on it.
 */
package io.satoken.controlplane.webhook;
