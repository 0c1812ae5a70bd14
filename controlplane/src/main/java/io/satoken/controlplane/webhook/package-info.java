/**
 * The HTTPS admission webhook the API server calls; it runs in every replica, leader or not. {@link AdmissionWebhook}
 * assembles it from the rules of {@code admission}: the paths {@code --webhooks} selects, the informer caches they
 * read ({@code kube.Informers}) and the poll that reloads the {@link ServingCertificate}; {@code runtime} starts it.
 * {@link WebhookServer} runs the pipeline: TLS (with client certificates when {@code --client-ca-file} is given),
 * the request deadline ({@code RequestDeadline}), each {@code Client}'s share of the memory for bodies
 * ({@code BodyBudget}, claimed by {@code BodyClaim}, with the pace a body must keep, {@code BodyPace}) and the body
 * limit ({@code BodyLimit}), then {@code ReviewHandler}, which reviews on a worker pool within the review deadline.
 * {@link AdmissionReviews} reads an AdmissionReview ({@code ReviewReader} streams it, keeping only what the rules'
 * {@code admission.ReviewShape} names) and writes the answer, which {@code WebhookResponses} sends;
 * {@code WebhookMetrics} counts every answer.
 *
 * <p>Depends on {@code admission}, {@code admission.view} and {@code kube}; nothing there depends on it.
 */
package io.satoken.controlplane.webhook;
