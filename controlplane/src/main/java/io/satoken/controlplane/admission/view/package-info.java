/**
 * Typed views of the objects under review, over their JSON: a pod ({@link PodView}, its {@link ContainerView}s and
 * {@link VolumeView}s) and a TokenRequest ({@link TokenRequestView}), read as JSON rather than as client-java models
 * so that a newer API server's fields never make a pod unreadable. {@link PodPatch} makes every change to a pod and
 * records it as a JSONPatch operation, so a view shows the pod as changed so far. Every member read is a
 * {@link Field} declared where it is read, and the only way to read one; {@link ReviewShape}, what the webhook's
 * reader keeps of a review, is derived from the declarations, so no rule reads a member the reader dropped.
 * {@link Json} does the typed reads for the fields; a field of the wrong type is an {@link InvalidReviewException} naming its path, which the webhook answers as a
 * denied review. Depends on nothing else of the control plane; the rules ({@code admission}) and the webhook's
 * review reader use it.
 */
package io.satoken.controlplane.admission.view;
