/**
 * The HTTPS admission webhook the API server calls; it runs in every replica, leader or not. {@link AdmissionWebhook}
 * assembles it: a {@link WebhookServer} (TLS from a reloaded {@code ServingCertificate}, bounded bodies, a worker
 * pool, deadlines) routes {@code /mutate/pods} to {@code PodMutation}, which applies {@link ServiceAccountAdmission}
 * (kube-apiserver's ServiceAccount plugin, AD-1..AD-11) and then {@code AgentTokenInjection} (a pod's
 * {@code satoken.io/projections} annotation becomes the agent's CSI inline volume; a token volume mounted through
 * {@code subPath} is admitted with a warning, {@code SubPathWarnings}), and
 * {@code /validate/serviceaccount-token} to {@link NodeTokenRestriction}, which confines the node agents'
 * TokenRequests to the pods of their own node (NT-1..NT-6, defined in the README). Pods are read through a typed
 * view of their JSON ({@code PodView}, {@code VolumeView}, {@code ContainerView}) and patched in place by
 * {@code PodPatch}, not as client-java models; an answer is a {@link Verdict}: allowed, patched or denied. It reads
 * ServiceAccounts and Secrets from {@code controller.Informers}; {@code runtime.ControlplaneRuntime} starts it.
 */
package io.satoken.controlplane.admission;
