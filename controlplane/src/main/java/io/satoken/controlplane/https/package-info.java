/**
 * The HTTPS server the API server calls, and its defences against hostile clients; it knows nothing of what it
 * serves. {@link WebhookServer} runs the pipeline: TLS with the {@link ServingCertificate} (with client certificates
 * when {@code --client-ca-file} is given), the request deadline ({@code RequestDeadline}), each {@code Client}'s
 * share of the memory for bodies ({@code BodyBudget}, claimed by {@code BodyClaim}, with the pace a body must keep,
 * {@code BodyPace}) and the body limit ({@code BodyLimit}), then {@code RequestHandler}, which has the
 * {@link Endpoint} answer on a worker pool within the review deadline; {@code InFlight} tracks what a drain waits
 * for. The {@link Endpoint} writes every body, the server's own refusals (408, 413, 415, 503) included;
 * {@code WebhookResponses} sends them and {@link WebhookMetrics} counts every answer.
 *
 * <p>Depends on no other package of the control plane; {@code webhook} serves the admission rules on it.
 */
package io.satoken.controlplane.https;
