package io.satoken.controlplane.admission;

import io.kubernetes.client.openapi.models.V1LocalObjectReference;
import io.kubernetes.client.openapi.models.V1ObjectReference;
import io.kubernetes.client.openapi.models.V1ServiceAccount;
import io.satoken.controlplane.admission.view.ContainerView;
import io.satoken.controlplane.admission.view.Field;
import io.satoken.controlplane.admission.view.InvalidReviewException;
import io.satoken.controlplane.admission.view.PodView;
import io.satoken.controlplane.admission.view.VolumeView;
import java.util.HashSet;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;

/**
 * AD-8..AD-10: which Secrets a pod may reference, and whether it references any at all (mirror pods).
 * Each check returns the first violation as upstream words it, if there is one.
 */
final class MountableSecrets {

    /** AD-10: the ServiceAccount annotation that turns enforcement on for its pods. */
    static final String ENFORCE_ANNOTATION = "kubernetes.io/enforce-mountable-secrets";

    private MountableSecrets() {
    }

    /** AD-10: the plugin-wide flag, or the ServiceAccount's annotation parsed as Go's ParseBool does. */
    static boolean enforced(boolean limitSecretReferences, V1ServiceAccount serviceAccount) {
        if (limitSecretReferences) {
            return true;
        }
        var annotations = serviceAccount.getMetadata() == null ? null : serviceAccount.getMetadata().getAnnotations();
        String value = annotations == null ? null : annotations.get(ENFORCE_ANNOTATION);
        return value != null && List.of("1", "t", "T", "TRUE", "true", "True").contains(value);
    }

    /** AD-9: secret volumes, then init and regular containers' env and envFrom, then imagePullSecrets. */
    static Optional<String> violation(V1ServiceAccount serviceAccount, PodView pod) throws InvalidReviewException {
        Set<String> mountable = secretNames(serviceAccount);
        String account = name(serviceAccount);
        for (VolumeView volume : pod.volumes()) {
            if (!volume.isSecret()) {
                continue;
            }
            String secretName = volume.secretName().orElse("");
            if (!mountable.contains(secretName)) {
                return Optional.of("volume with secret.secretName=\"" + secretName + "\" is not allowed because "
                        + "service account " + account + " does not reference that secret");
            }
        }
        for (ContainerView container : pod.containers(PodView.INIT_CONTAINERS)) {
            Optional<String> found = containerViolation("init container", container, mountable, account);
            if (found.isPresent()) {
                return found;
            }
        }
        for (ContainerView container : pod.containers(PodView.CONTAINERS)) {
            Optional<String> found = containerViolation("container", container, mountable, account);
            if (found.isPresent()) {
                return found;
            }
        }
        Set<String> pullSecrets = new HashSet<>();
        for (V1LocalObjectReference ref : Objects.requireNonNullElse(serviceAccount.getImagePullSecrets(),
                List.<V1LocalObjectReference>of())) {
            pullSecrets.add(Objects.requireNonNullElse(ref.getName(), ""));
        }
        List<PodView.PullSecret> podPullSecrets = pod.imagePullSecrets();
        for (int i = 0; i < podPullSecrets.size(); i++) {
            String name = podPullSecrets.get(i).name();
            if (!pullSecrets.contains(name)) {
                return Optional.of("imagePullSecrets[" + i + "].name=\"" + name + "\" is not allowed because service "
                        + "account " + account + " does not reference that imagePullSecret");
            }
        }
        return Optional.empty();
    }

    /** AD-8: ephemeral containers' env and envFrom only. */
    static Optional<String> ephemeralViolation(V1ServiceAccount serviceAccount, PodView pod)
            throws InvalidReviewException {
        Set<String> mountable = secretNames(serviceAccount);
        for (ContainerView container : pod.containers(PodView.EPHEMERAL_CONTAINERS)) {
            Optional<String> found = containerViolation("ephemeral container", container, mountable,
                    name(serviceAccount));
            if (found.isPresent()) {
                return found;
            }
        }
        return Optional.empty();
    }

    /**
     * AD-9, mirror pods: true if the pod names a Secret anywhere upstream's {@code VisitPodSecretNames}
     * looks: image pull secrets, every container's env and envFrom, and every volume kind that takes one.
     */
    static boolean referencesAny(PodView pod) throws InvalidReviewException {
        if (pod.hasImagePullSecrets()) {
            return true;
        }
        for (Field.Items list : List.of(PodView.INIT_CONTAINERS, PodView.CONTAINERS, PodView.EPHEMERAL_CONTAINERS)) {
            for (ContainerView container : pod.containers(list)) {
                for (ContainerView.EnvFrom from : container.envFrom()) {
                    if (from.fromSecret()) {
                        return true;
                    }
                }
                for (ContainerView.EnvVar env : container.env()) {
                    if (env.fromSecret()) {
                        return true;
                    }
                }
            }
        }
        for (VolumeView volume : pod.volumes()) {
            if (volume.referencesSecret()) {
                return true;
            }
        }
        return false;
    }

    private static Optional<String> containerViolation(String kind, ContainerView container, Set<String> mountable,
            String account) throws InvalidReviewException {
        String name = container.name();
        for (ContainerView.EnvVar env : container.env()) {
            Optional<String> secretName = env.secretKeyRefName();
            if (secretName.isPresent() && !mountable.contains(secretName.get())) {
                return Optional.of(kind + " " + name + " with envVar " + env.name()
                        + " referencing secret.secretName=\"" + secretName.get() + "\" is not allowed because service "
                        + "account " + account + " does not reference that secret");
            }
        }
        for (ContainerView.EnvFrom from : container.envFrom()) {
            Optional<String> secretName = from.secretRefName();
            if (secretName.isPresent() && !mountable.contains(secretName.get())) {
                return Optional.of(kind + " " + name + " with envFrom referencing secret.secretName=\""
                        + secretName.get() + "\" is not allowed because service account " + account
                        + " does not reference that secret");
            }
        }
        return Optional.empty();
    }

    private static Set<String> secretNames(V1ServiceAccount serviceAccount) {
        Set<String> names = new HashSet<>();
        for (V1ObjectReference ref : Objects.requireNonNullElse(serviceAccount.getSecrets(),
                List.<V1ObjectReference>of())) {
            names.add(Objects.requireNonNullElse(ref.getName(), ""));
        }
        return names;
    }

    private static String name(V1ServiceAccount serviceAccount) {
        return serviceAccount.getMetadata() == null ? "" : serviceAccount.getMetadata().getName();
    }
}
