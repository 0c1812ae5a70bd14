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

    /** A pod under review: the review's object includes it; rules declare the pod members they read on it too. */
    public static final Field.Obj POD = Field.root();
    private static final Field.Obj METADATA = POD.object("metadata");
    private static final Field.Str NAME = METADATA.string("name");
    private static final Field.Str GENERATE_NAME = METADATA.string("generateName");
    /** {@code metadata.annotations}: each rule declares the annotations it reads ({@link #annotation}). */
    public static final Field.Obj ANNOTATIONS = METADATA.object("annotations");
    static final Field.Obj SPEC = POD.object("spec");
    private static final Field.Str SERVICE_ACCOUNT_NAME = SPEC.string("serviceAccountName");
    private static final Field.Str SERVICE_ACCOUNT = SPEC.string("serviceAccount");
    private static final Field.Bool AUTOMOUNT = SPEC.bool("automountServiceAccountToken");
    /** {@code spec.volumes}, which {@link PodPatch#appendToSpec} appends to. */
    public static final Field.Items VOLUMES = SPEC.objects("volumes", VolumeView.VOLUME);
    private static final Field.Items IMAGE_PULL_SECRETS = SPEC.objects("imagePullSecrets");
    private static final Field.Str PULL_SECRET_NAME = IMAGE_PULL_SECRETS.item().string("name");
    public static final Field.Items INIT_CONTAINERS = SPEC.objects("initContainers", ContainerView.CONTAINER);
    public static final Field.Items CONTAINERS = SPEC.objects("containers", ContainerView.CONTAINER);
    public static final Field.Items EPHEMERAL_CONTAINERS = SPEC.objects("ephemeralContainers", ContainerView.CONTAINER);

    private final JsonObject pod;
    private final JsonObject spec;

    public PodView(JsonObject pod, JsonObject spec) {
        this.pod = pod;
        this.spec = spec;
    }

    /** The annotation {@code key} (declared on {@link #ANNOTATIONS}), if the pod has it as a string. */
    public Optional<String> annotation(Field.Str key) throws InvalidReviewException {
        return Optional.ofNullable(key.read(annotations(), "metadata.annotations"));
    }

    /** Whether the pod has the annotation {@code key} (declared on {@link #ANNOTATIONS}), whatever its value. */
    public boolean hasAnnotation(Field.Str key) throws InvalidReviewException {
        return key.has(annotations());
    }

    /** {@code metadata.name}, or "" when absent. */
    public String name() throws InvalidReviewException {
        return NAME.readOrEmpty(metadata(), "metadata");
    }

    /** {@code metadata.generateName}, or "" when absent. */
    public String generateName() throws InvalidReviewException {
        return GENERATE_NAME.readOrEmpty(metadata(), "metadata");
    }

    /** The pod's ServiceAccount; v1's deprecated {@code serviceAccount} stands in when the name is empty. */
    public String serviceAccountName() throws InvalidReviewException {
        String name = SERVICE_ACCOUNT_NAME.readOrEmpty(spec, "spec");
        return name.isEmpty() ? SERVICE_ACCOUNT.readOrEmpty(spec, "spec") : name;
    }

    /** {@code spec.automountServiceAccountToken}, if the pod says. */
    public Optional<Boolean> automountServiceAccountToken() throws InvalidReviewException {
        return Optional.ofNullable(AUTOMOUNT.read(spec, "spec"));
    }

    public List<VolumeView> volumes() throws InvalidReviewException {
        List<JsonObject> items = VOLUMES.read(spec, "spec");
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
            return PULL_SECRET_NAME.readOrEmpty(ref, path);
        }
    }

    /** {@code spec.imagePullSecrets}, in order. */
    public List<PullSecret> imagePullSecrets() throws InvalidReviewException {
        List<JsonObject> items = IMAGE_PULL_SECRETS.read(spec, "spec");
        List<PullSecret> secrets = new ArrayList<>(items.size());
        for (int i = 0; i < items.size(); i++) {
            secrets.add(new PullSecret(items.get(i), "spec.imagePullSecrets[" + i + "]"));
        }
        return secrets;
    }

    public boolean hasImagePullSecrets() throws InvalidReviewException {
        return !IMAGE_PULL_SECRETS.read(spec, "spec").isEmpty();
    }

    /** Init containers then regular containers, the order upstream visits them in. */
    public List<ContainerView> initAndRegularContainers() throws InvalidReviewException {
        List<ContainerView> containers = new ArrayList<>(containers(INIT_CONTAINERS));
        containers.addAll(containers(CONTAINERS));
        return containers;
    }

    /** The containers of {@code list}: {@link #INIT_CONTAINERS}, {@link #CONTAINERS} or {@link #EPHEMERAL_CONTAINERS}. */
    public List<ContainerView> containers(Field.Items list) throws InvalidReviewException {
        List<JsonObject> items = list.read(spec, "spec");
        List<ContainerView> containers = new ArrayList<>(items.size());
        for (int i = 0; i < items.size(); i++) {
            containers.add(new ContainerView(list.name(), i, items.get(i)));
        }
        return containers;
    }

    private JsonObject metadata() throws InvalidReviewException {
        return METADATA.read(pod, "request.object");
    }

    private JsonObject annotations() throws InvalidReviewException {
        return ANNOTATIONS.read(metadata(), "metadata");
    }
}
