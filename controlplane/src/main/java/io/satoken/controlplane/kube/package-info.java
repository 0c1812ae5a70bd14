/**
 * What the controllers and the webhook share about the API server, kept apart from both so that the webhook never
 * depends on a controller: {@link Informers}, one shared informer per kind, narrowed at the server where a kind is
 * large, each logging a failed list or watch once and backing off ({@link ListWatchBackoff}); and {@link ApiErrors},
 * which reads the API server's error answers as upstream's {@code apierrors.Is*} helpers do.
 */
package io.satoken.controlplane.kube;
