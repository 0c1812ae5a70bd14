package io.satoken.controlplane.admission.view;

import com.google.gson.JsonObject;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * What the admission rules read of a pod, typed, over its JSON and without copying it; {@link PodPatch} makes every
 * change, so a view shows the pod as changed so far. A field of the wrong type is an {@link InvalidReviewException}
 * naming its path ({@code spec.volumes[].secret.secretName: must be a string, got a number}); each field is read
 * when asked for, so a rule that stops early reads no further.
 */
public final class PodView {

    private final JsonObject pod;
    private final JsonObject spec;

    public PodView(JsonObject pod, JsonObject spec) {
        this.pod = pod;
        this.spec = spec;
    }

    /** {@code metadata.annotations[key]}, if the pod has it as a string. */
    public Optional<String> annotation(String key) throws InvalidReviewException {
        return Optional.ofNullable(Json.string(annotations(), key, "metadata.annotations"));
    }

    public boolean hasAnnotation(String key) throws InvalidReviewException {
        JsonObject annotations = annotations();
        return annotations != null && annotations.has(key);
    }

    /** {@code metadata.name}, or "" when absent. */
    public String name() throws InvalidReviewException {
        return Json.stringOrEmpty(metadata(), "name", "metadata");
    }

    /** {@code metadata.generateName}, or "" when absent. */
    public String generateName() throws InvalidReviewException {
        return Json.stringOrEmpty(metadata(), "generateName", "metadata");
    }

    /** The pod's ServiceAccount; v1's deprecated {@code serviceAccount} stands in when the name is empty. */
    public String serviceAccountName() throws InvalidReviewException {
        String name = Json.stringOrEmpty(spec, "serviceAccountName", "spec");
        return name.isEmpty() ? Json.stringOrEmpty(spec, "serviceAccount", "spec") : name;
    }

    /** {@code spec.automountServiceAccountToken}, if the pod says. */
    public Optional<Boolean> automountServiceAccountToken() throws InvalidReviewException {
        return Optional.ofNullable(Json.bool(spec, "automountServiceAccountToken", "spec"));
    }

    public List<VolumeView> volumes() throws InvalidReviewException {
        List<JsonObject> items = Json.objects(spec, "volumes", "spec");
        List<VolumeView> volumes = new ArrayList<>(items.size());
        for (JsonObject item : items) {
            volumes.add(new VolumeView(item));
        }
        return volumes;
    }

    /** One of {@code spec.imagePullSecrets}; its name is read when asked for. */
    public record PullSecret(JsonObject ref, String path) {
        /** The name, or "" when absent. */
        public String name() throws InvalidReviewException {
            return Json.stringOrEmpty(ref, "name", path);
        }
    }

    /** {@code spec.imagePullSecrets}, in order. */
    public List<PullSecret> imagePullSecrets() throws InvalidReviewException {
        List<JsonObject> items = Json.objects(spec, "imagePullSecrets", "spec");
        List<PullSecret> secrets = new ArrayList<>(items.size());
        for (int i = 0; i < items.size(); i++) {
            secrets.add(new PullSecret(items.get(i), "spec.imagePullSecrets[" + i + "]"));
        }
        return secrets;
    }

    public boolean hasImagePullSecrets() throws InvalidReviewException {
        return !Json.objects(spec, "imagePullSecrets", "spec").isEmpty();
    }

    /** Init containers then regular containers, the order upstream visits them in. */
    public List<ContainerView> initAndRegularContainers() throws InvalidReviewException {
        List<ContainerView> containers = new ArrayList<>(containers("initContainers"));
        containers.addAll(containers("containers"));
        return containers;
    }

    /** The containers of {@code spec.<list>}: {@code initContainers}, {@code containers} or {@code ephemeralContainers}. */
    public List<ContainerView> containers(String list) throws InvalidReviewException {
        List<JsonObject> items = Json.objects(spec, list, "spec");
        List<ContainerView> containers = new ArrayList<>(items.size());
        for (int i = 0; i < items.size(); i++) {
            containers.add(new ContainerView(list, i, items.get(i)));
        }
        return containers;
    }

    private JsonObject metadata() throws InvalidReviewException {
        return Json.object(pod, "metadata", "request.object");
    }

    private JsonObject annotations() throws InvalidReviewException {
        return Json.object(metadata(), "annotations", "metadata");
    }
}
