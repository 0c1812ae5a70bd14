package io.satoken.controlplane.admission.view;

import com.google.gson.JsonObject;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.function.BiFunction;

/**
 * One container of a pod, where it sits (its list and index) and what the rules read of it; {@link PodPatch} takes
 * it to change the container. See {@link PodView}.
 */
public record ContainerView(String list, int index, JsonObject container) {

    /** A container: {@link PodView} includes it as the item of its three lists of containers. */
    static final Field.Obj CONTAINER = Field.root();
    private static final Field.Str NAME = CONTAINER.string("name");
    /** {@code volumeMounts}, which {@link PodPatch#appendToContainer} appends to. */
    public static final Field.Items VOLUME_MOUNTS = CONTAINER.objects("volumeMounts");
    private static final Field.Str MOUNT_NAME = VOLUME_MOUNTS.item().string("name");
    private static final Field.Str MOUNT_PATH = VOLUME_MOUNTS.item().string("mountPath");
    /** {@code subPath} and {@code subPathExpr}, in the order they are looked at. */
    private static final List<Field.Str> SUB_PATHS = List.of(VOLUME_MOUNTS.item().string("subPath"),
            VOLUME_MOUNTS.item().string("subPathExpr"));
    private static final Field.Items ENV = CONTAINER.objects("env");
    private static final Field.Str ENV_NAME = ENV.item().string("name");
    private static final Field.Obj VALUE_FROM = ENV.item().object("valueFrom");
    private static final Field.Obj SECRET_KEY_REF = VALUE_FROM.object("secretKeyRef");
    private static final Field.Str SECRET_KEY_REF_NAME = SECRET_KEY_REF.string("name");
    private static final Field.Items ENV_FROM = CONTAINER.objects("envFrom");
    private static final Field.Obj SECRET_REF = ENV_FROM.item().object("secretRef");
    private static final Field.Str SECRET_REF_NAME = SECRET_REF.string("name");

    /** One of the container's {@code volumeMounts}. */
    public record Mount(JsonObject mount, String path) {
        /** {@code mountPath}, or null when absent. */
        public String mountPath() throws InvalidReviewException {
            return MOUNT_PATH.read(mount, path);
        }

        /** {@code name}, or null when absent. */
        public String name() throws InvalidReviewException {
            return MOUNT_NAME.read(mount, path);
        }

        /** {@code subPath}, or {@code subPathExpr} with its field name, when the mount gives a non-empty one. */
        public Optional<String> subPathField() throws InvalidReviewException {
            for (Field.Str field : SUB_PATHS) {
                String value = field.read(mount, path);
                if (value != null && !value.isEmpty()) {
                    return Optional.of(field.name());
                }
            }
            return Optional.empty();
        }
    }

    /** One of the container's {@code env} variables. */
    public record EnvVar(JsonObject env, String path) {
        public String name() throws InvalidReviewException {
            return ENV_NAME.readOrEmpty(env, path);
        }

        /** The Secret of {@code valueFrom.secretKeyRef} ("" when it names none), if the value comes from one. */
        public Optional<String> secretKeyRefName() throws InvalidReviewException {
            JsonObject secretKeyRef = secretKeyRef();
            return secretKeyRef == null ? Optional.empty()
                    : Optional.of(SECRET_KEY_REF_NAME.readOrEmpty(secretKeyRef, path + ".valueFrom.secretKeyRef"));
        }

        public boolean fromSecret() throws InvalidReviewException {
            return secretKeyRef() != null;
        }

        private JsonObject secretKeyRef() throws InvalidReviewException {
            return SECRET_KEY_REF.read(VALUE_FROM.read(env, path), path + ".valueFrom");
        }
    }

    /** One of the container's {@code envFrom} sources. */
    public record EnvFrom(JsonObject from, String path) {
        /** The Secret of {@code secretRef} ("" when it names none), if the source is one. */
        public Optional<String> secretRefName() throws InvalidReviewException {
            JsonObject secretRef = SECRET_REF.read(from, path);
            return secretRef == null ? Optional.empty()
                    : Optional.of(SECRET_REF_NAME.readOrEmpty(secretRef, path + ".secretRef"));
        }

        public boolean fromSecret() throws InvalidReviewException {
            return SECRET_REF.present(from, path);
        }
    }

    /** The JSON pointer of the container, for the patch. */
    String pointer() {
        return "/spec/" + list + "/" + index;
    }

    /** The field path for messages, e.g. {@code spec.initContainers[0]}. */
    public String path() {
        return "spec." + list + "[" + index + "]";
    }

    public String name() throws InvalidReviewException {
        return NAME.readOrEmpty(container, path());
    }

    public List<Mount> volumeMounts() throws InvalidReviewException {
        return items(VOLUME_MOUNTS, Mount::new);
    }

    public List<EnvVar> env() throws InvalidReviewException {
        return items(ENV, EnvVar::new);
    }

    public List<EnvFrom> envFrom() throws InvalidReviewException {
        return items(ENV_FROM, EnvFrom::new);
    }

    /** The list {@code field} of the container, each item seen through {@code view}. */
    private <T> List<T> items(Field.Items field, BiFunction<JsonObject, String, T> view) throws InvalidReviewException {
        List<JsonObject> items = field.read(container, path());
        List<T> views = new ArrayList<>(items.size());
        String itemPath = path() + "." + field.name() + "[]";
        for (JsonObject item : items) {
            views.add(view.apply(item, itemPath));
        }
        return views;
    }
}
