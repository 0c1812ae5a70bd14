package io.satoken.controlplane.admission;

import com.google.gson.JsonArray;
import com.google.gson.JsonObject;
import io.kubernetes.client.openapi.models.V1LocalObjectReference;
import io.kubernetes.client.openapi.models.V1ServiceAccount;
import io.satoken.controlplane.admission.view.ContainerView;
import io.satoken.controlplane.admission.view.Field;
import io.satoken.controlplane.admission.view.InvalidReviewException;
import io.satoken.controlplane.admission.view.Json;
import io.satoken.controlplane.admission.view.PodPatch;
import io.satoken.controlplane.admission.view.PodView;
import io.satoken.controlplane.admission.view.VolumeView;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.function.Supplier;

/**
 * The ServiceAccount admission rules (spec section 5, v1.30), as a webhook: defaults a pod's
 * ServiceAccount, checks that it exists, mounts its token, copies its image pull secrets, and enforces
 * mountable secrets. Mirror pods are only checked, never changed.
 *
 * <p>Admission of a create, in upstream's order:
 * <ol>
 *   <li>a mirror pod is validated only (AD-2, AD-9);</li>
 *   <li>an empty {@code serviceAccountName} becomes {@code default} (AD-3);</li>
 *   <li>the ServiceAccount is looked up, cache first (AD-4); not found → Forbidden;</li>
 *   <li>if the token is automounted (AD-5), the projected token volume and its mounts are added (AD-6; the
 *       v1.17 token Secret volume of AD-11 is not offered: it would have the webhook read every Secret);</li>
 *   <li>a pod without image pull secrets gets the ServiceAccount's (AD-7);</li>
 *   <li>the result is validated (AD-9, AD-10).</li>
 * </ol>
 * Running it again on its own output adds nothing (AD-7a).
 */
public final class ServiceAccountAdmission {

    /** AD-C. */
    public static final String DEFAULT_SERVICE_ACCOUNT = "default";
    static final String MIRROR_POD_ANNOTATION = "kubernetes.io/config.mirror";
    static final Field.Str MIRROR_POD = PodView.ANNOTATIONS.string(MIRROR_POD_ANNOTATION);
    static final String TOKEN_MOUNT_PATH = "/var/run/secrets/kubernetes.io/serviceaccount";
    static final String PROJECTED_VOLUME_PREFIX = "kube-api-access-";
    /** AD-6: the injected token's lifetime. */
    static final long TOKEN_EXPIRATION_SECONDS = 3607;

    private final ServiceAccountLookup lookup;
    private final boolean limitSecretReferences;
    private final Supplier<String> nameSuffix;

    /**
     * @param limitSecretReferences AD-10's plugin-wide switch
     * @param nameSuffix the random part of a generated volume name (five characters, as upstream's generator)
     */
    public ServiceAccountAdmission(ServiceAccountLookup lookup, boolean limitSecretReferences,
            Supplier<String> nameSuffix) {
        this.lookup = lookup;
        this.limitSecretReferences = limitSecretReferences;
        this.nameSuffix = nameSuffix;
    }

    /**
     * Admits {@code request}'s pod, recording changes in {@code pod}: empty when allowed (with whatever
     * {@code pod} now holds), else the denial.
     */
    Optional<Verdict.Denied> admit(AdmissionRequest request, PodPatch pod)
            throws InvalidReviewException, InterruptedException {
        if ("ephemeralcontainers".equals(request.subResource())) {
            return "UPDATE".equals(request.operation()) ? validateEphemeral(request, pod.view()) : Optional.empty();
        }
        if (!request.isCreate()) {
            return Optional.empty(); // AD-9
        }
        if (pod.view().hasAnnotation(MIRROR_POD)) {
            return validateMirror(request, pod.view()); // AD-2
        }
        String accountName = pod.view().serviceAccountName();
        if (accountName.isEmpty()) {
            accountName = DEFAULT_SERVICE_ACCOUNT; // AD-3
            pod.setSpec("serviceAccountName", Json.text(accountName));
        }
        V1ServiceAccount account;
        try {
            account = lookup.get(request.namespace(), accountName); // AD-4
        } catch (ServiceAccountLookup.LookupException e) {
            return forbidden(request, pod.view(), "error looking up service account " + request.namespace() + "/"
                    + accountName + ": " + e.getMessage());
        }
        if (automount(pod.view(), account)) { // AD-5
            mountProjected(pod);
        }
        copyImagePullSecrets(pod, account); // AD-7
        if (MountableSecrets.enforced(limitSecretReferences, account)) { // AD-10
            Optional<String> violation = MountableSecrets.violation(account, pod.view()); // AD-9
            if (violation.isPresent()) {
                return forbidden(request, pod.view(), violation.get());
            }
        }
        return Optional.empty();
    }

    /** AD-8. */
    private Optional<Verdict.Denied> validateEphemeral(AdmissionRequest request, PodView pod)
            throws InvalidReviewException, InterruptedException {
        String accountName = pod.serviceAccountName();
        if (accountName.isEmpty()) {
            return forbidden(request, pod, "no service account specified for pod " + request.namespacedName());
        }
        V1ServiceAccount account;
        try {
            account = lookup.get(request.namespace(), accountName);
        } catch (ServiceAccountLookup.LookupException e) {
            return forbidden(request, pod, "error looking up service account " + request.namespace() + "/"
                    + accountName + ": " + e.getMessage());
        }
        if (MountableSecrets.enforced(limitSecretReferences, account)) {
            Optional<String> violation = MountableSecrets.ephemeralViolation(account, pod);
            if (violation.isPresent()) {
                return forbidden(request, pod, violation.get());
            }
        }
        return Optional.empty();
    }

    /** AD-9, mirror pods. */
    private static Optional<Verdict.Denied> validateMirror(AdmissionRequest request, PodView pod)
            throws InvalidReviewException {
        if (!pod.serviceAccountName().isEmpty()) {
            return forbidden(request, pod, "a mirror pod may not reference service accounts");
        }
        if (MountableSecrets.referencesAny(pod)) {
            return forbidden(request, pod, "a mirror pod may not reference secrets");
        }
        for (VolumeView volume : pod.volumes()) {
            if (volume.projectsServiceAccountToken()) {
                return forbidden(request, pod, "a mirror pod may not use ServiceAccountToken volume projections");
            }
        }
        return Optional.empty();
    }

    /** AD-5: the pod's choice, else the ServiceAccount's, else true. */
    private static boolean automount(PodView pod, V1ServiceAccount account) throws InvalidReviewException {
        Optional<Boolean> podChoice = pod.automountServiceAccountToken();
        if (podChoice.isPresent()) {
            return podChoice.get();
        }
        return !Boolean.FALSE.equals(account.getAutomountServiceAccountToken());
    }

    /** AD-6. */
    private void mountProjected(PodPatch pod) throws InvalidReviewException {
        String existing = null;
        for (VolumeView volume : pod.view().volumes()) {
            String name = volume.name();
            if (name.startsWith(PROJECTED_VOLUME_PREFIX)) {
                existing = name;
                break;
            }
        }
        String volumeName = existing != null ? existing : PROJECTED_VOLUME_PREFIX + nameSuffix.get();
        if (mountInEveryContainer(pod, volumeName) && existing == null) {
            pod.appendToSpec(PodView.VOLUMES, TokenVolumes.projected(volumeName, TOKEN_EXPIRATION_SECONDS));
        }
    }

    /** AD-6: mounts in every init and regular container without a mount at the path; true if any got one. */
    private static boolean mountInEveryContainer(PodPatch pod, String volumeName) throws InvalidReviewException {
        boolean mounted = false;
        for (ContainerView container : pod.view().initAndRegularContainers()) {
            boolean hasMount = false;
            for (ContainerView.Mount mount : container.volumeMounts()) {
                if (TOKEN_MOUNT_PATH.equals(mount.mountPath())) {
                    hasMount = true;
                    break;
                }
            }
            if (!hasMount) {
                pod.appendToContainer(container, ContainerView.VOLUME_MOUNTS, TokenVolumes.mount(volumeName, TOKEN_MOUNT_PATH));
                mounted = true;
            }
        }
        return mounted;
    }

    /** AD-7: names only, in order, and only when the pod has none. */
    private static void copyImagePullSecrets(PodPatch pod, V1ServiceAccount account) throws InvalidReviewException {
        List<V1LocalObjectReference> accountSecrets = account.getImagePullSecrets();
        if (pod.view().hasImagePullSecrets()
                || accountSecrets == null || accountSecrets.isEmpty()) {
            return;
        }
        JsonArray copied = new JsonArray();
        for (V1LocalObjectReference ref : accountSecrets) {
            JsonObject item = new JsonObject();
            item.addProperty("name", Objects.requireNonNullElse(ref.getName(), ""));
            copied.add(item);
        }
        pod.setSpec("imagePullSecrets", copied);
    }

    /** Upstream's {@code admission.NewForbidden}: {@code pods "<name>" is forbidden: <reason>}. */
    static Optional<Verdict.Denied> forbidden(AdmissionRequest request, PodView pod, String reason)
            throws InvalidReviewException {
        return Optional.of(Verdict.forbidden("pods \"" + podName(request, pod) + "\" is forbidden: " + reason));
    }

    /** The request's name, else the object's name, else its generateName, else "Unknown", as upstream picks. */
    private static String podName(AdmissionRequest request, PodView pod) throws InvalidReviewException {
        if (!request.name().isEmpty()) {
            return request.name();
        }
        String name = pod.name();
        String generateName = pod.generateName();
        return !name.isEmpty() ? name : !generateName.isEmpty() ? generateName : "Unknown";
    }
}
