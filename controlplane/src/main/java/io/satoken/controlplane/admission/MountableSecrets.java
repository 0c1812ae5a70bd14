package io.satoken.controlplane.admission;

import com.google.gson.JsonObject;
import io.kubernetes.client.openapi.models.V1LocalObjectReference;
import io.kubernetes.client.openapi.models.V1ObjectReference;
import io.kubernetes.client.openapi.models.V1ServiceAccount;
import java.util.HashSet;
import java.util.List;
import java.util.Objects;
import java.util.Set;

/**
 * AD-8..AD-10: which Secrets a pod may reference, and whether it references any at all (mirror pods).
 * Each check returns the first violation as upstream words it, or null.
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
    static String violation(V1ServiceAccount serviceAccount, PodPatch pod) throws InvalidReviewException {
        Set<String> mountable = secretNames(serviceAccount);
        String account = name(serviceAccount);
        for (JsonObject volume : Json.objects(pod.spec(), "volumes", "spec")) {
            JsonObject secret = Json.object(volume, "secret", "spec.volumes[]");
            if (secret == null) {
                continue;
            }
            String secretName = Json.stringOrEmpty(secret, "secretName", "spec.volumes[].secret");
            if (!mountable.contains(secretName)) {
                return "volume with secret.secretName=\"" + secretName + "\" is not allowed because service account "
                        + account + " does not reference that secret";
            }
        }
        for (PodPatch.ContainerRef ref : pod.containers("initContainers")) {
            String found = containerViolation("init container", ref, mountable, account);
            if (found != null) {
                return found;
            }
        }
        for (PodPatch.ContainerRef ref : pod.containers("containers")) {
            String found = containerViolation("container", ref, mountable, account);
            if (found != null) {
                return found;
            }
        }
        Set<String> pullSecrets = new HashSet<>();
        for (V1LocalObjectReference ref : Objects.requireNonNullElse(serviceAccount.getImagePullSecrets(),
                List.<V1LocalObjectReference>of())) {
            pullSecrets.add(Objects.requireNonNullElse(ref.getName(), ""));
        }
        List<JsonObject> podPullSecrets = Json.objects(pod.spec(), "imagePullSecrets", "spec");
        for (int i = 0; i < podPullSecrets.size(); i++) {
            String name = Json.stringOrEmpty(podPullSecrets.get(i), "name", "spec.imagePullSecrets[" + i + "]");
            if (!pullSecrets.contains(name)) {
                return "imagePullSecrets[" + i + "].name=\"" + name + "\" is not allowed because service account "
                        + account + " does not reference that imagePullSecret";
            }
        }
        return null;
    }

    /** AD-8: ephemeral containers' env and envFrom only. */
    static String ephemeralViolation(V1ServiceAccount serviceAccount, PodPatch pod) throws InvalidReviewException {
        Set<String> mountable = secretNames(serviceAccount);
        for (PodPatch.ContainerRef ref : pod.containers("ephemeralContainers")) {
            String found = containerViolation("ephemeral container", ref, mountable, name(serviceAccount));
            if (found != null) {
                return found;
            }
        }
        return null;
    }

    /**
     * AD-9, mirror pods: true if the pod names a Secret anywhere upstream's {@code VisitPodSecretNames}
     * looks: image pull secrets, every container's env and envFrom, and every volume kind that takes one.
     */
    static boolean referencesAny(PodPatch pod) throws InvalidReviewException {
        JsonObject spec = pod.spec();
        if (!Json.objects(spec, "imagePullSecrets", "spec").isEmpty()) {
            return true;
        }
        for (String list : List.of("initContainers", "containers", "ephemeralContainers")) {
            for (PodPatch.ContainerRef ref : pod.containers(list)) {
                for (JsonObject from : Json.objects(ref.container(), "envFrom", ref.path())) {
                    if (Json.object(from, "secretRef", ref.path() + ".envFrom[]") != null) {
                        return true;
                    }
                }
                for (JsonObject env : Json.objects(ref.container(), "env", ref.path())) {
                    JsonObject valueFrom = Json.object(env, "valueFrom", ref.path() + ".env[]");
                    if (Json.object(valueFrom, "secretKeyRef", ref.path() + ".env[].valueFrom") != null) {
                        return true;
                    }
                }
            }
        }
        for (JsonObject volume : Json.objects(spec, "volumes", "spec")) {
            if (volumeReferencesSecret(volume)) {
                return true;
            }
        }
        return false;
    }

    private static boolean volumeReferencesSecret(JsonObject volume) throws InvalidReviewException {
        String path = "spec.volumes[]";
        if (Json.object(volume, "secret", path) != null) {
            return true;
        }
        JsonObject azureFile = Json.object(volume, "azureFile", path);
        if (azureFile != null && azureFile.has("secretName")) {
            return true;
        }
        for (String kind : List.of("cephfs", "cinder", "flexVolume", "rbd", "scaleIO", "iscsi", "storageos")) {
            if (Json.object(Json.object(volume, kind, path), "secretRef", path + "." + kind) != null) {
                return true;
            }
        }
        if (Json.object(Json.object(volume, "csi", path), "nodePublishSecretRef", path + ".csi") != null) {
            return true;
        }
        JsonObject projected = Json.object(volume, "projected", path);
        for (JsonObject source : Json.objects(projected, "sources", path + ".projected")) {
            if (Json.object(source, "secret", path + ".projected.sources[]") != null) {
                return true;
            }
        }
        return false;
    }

    private static String containerViolation(String kind, PodPatch.ContainerRef ref, Set<String> mountable,
            String account) throws InvalidReviewException {
        String container = ref.name();
        for (JsonObject env : Json.objects(ref.container(), "env", ref.path())) {
            JsonObject valueFrom = Json.object(env, "valueFrom", ref.path() + ".env[]");
            JsonObject secretKeyRef = Json.object(valueFrom, "secretKeyRef", ref.path() + ".env[].valueFrom");
            if (secretKeyRef == null) {
                continue;
            }
            String secretName = Json.stringOrEmpty(secretKeyRef, "name", ref.path() + ".env[].valueFrom.secretKeyRef");
            if (!mountable.contains(secretName)) {
                return kind + " " + container + " with envVar " + Json.stringOrEmpty(env, "name", ref.path() + ".env[]")
                        + " referencing secret.secretName=\"" + secretName + "\" is not allowed because service account "
                        + account + " does not reference that secret";
            }
        }
        for (JsonObject from : Json.objects(ref.container(), "envFrom", ref.path())) {
            JsonObject secretRef = Json.object(from, "secretRef", ref.path() + ".envFrom[]");
            if (secretRef == null) {
                continue;
            }
            String secretName = Json.stringOrEmpty(secretRef, "name", ref.path() + ".envFrom[].secretRef");
            if (!mountable.contains(secretName)) {
                return kind + " " + container + " with envFrom referencing secret.secretName=\"" + secretName
                        + "\" is not allowed because service account " + account + " does not reference that secret";
            }
        }
        return null;
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
