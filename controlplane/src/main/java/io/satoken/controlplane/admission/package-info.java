/**
 * The admission rules: what the webhook decides, without the HTTPS server that asks ({@code webhook}) or the JSON
 * views the rules read a pod through ({@code admission.view}). A path's decision is an {@link Admission}: an
 * {@link AdmissionRequest} in, a {@link Verdict} out (allowed, patched or denied). {@link PodMutation}
 * ({@code /mutate/pods}) applies {@link ServiceAccountAdmission} (kube-apiserver's ServiceAccount plugin, AD-1..AD-11,
 * with {@code ServiceAccountLookup}, {@code MountableSecrets} and the volumes of {@code TokenVolumes}) and then
 * {@link AgentTokenInjection} (a pod's {@code satoken.io/projections} annotation becomes the agent's CSI inline
 * volume; a token volume mounted through {@code subPath} is admitted with a warning, {@code SubPathWarnings}).
 * {@link NodeTokenRestriction} ({@code /validate/serviceaccount-token}) confines the node agents' TokenRequests to
 * the pods of their own node (NT-1..NT-6, docs/security.md), reading pods live ({@code PodFactsLookup}, what their
 * volumes ask for: {@code CsiTokenRequests}) and the API server's audiences ({@code ApiAudiences}).
 * A rule that reads a member of the pod the views do not (an annotation) declares it ({@code view.Field}) on the
 * view's root; the webhook's reader keeps what is declared and nothing else.
 *
 * <p>Depends on {@code admission.view} and {@code kube} (API errors) only; {@code webhook} depends on it, never the
 * other way, and nothing here imports a controller.
 */
package io.satoken.controlplane.admission;
