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

    /** One of the container's {@code volumeMounts}. */
    public record Mount(JsonObject mount, String path) {
        /** {@code mountPath}, or null when absent. */
        public String mountPath() throws InvalidReviewException {
            return Json.string(mount, "mountPath", path);
        }

        /** {@code name}, or null when absent. */
        public String name() throws InvalidReviewException {
            return Json.string(mount, "name", path);
        }

        /** {@code subPath}, or {@code subPathExpr} with its field name, when the mount gives a non-empty one. */
        public Optional<String> subPathField() throws InvalidReviewException {
            for (String field : new String[] {"subPath", "subPathExpr"}) {
                String value = Json.string(mount, field, path);
                if (value != null && !value.isEmpty()) {
                    return Optional.of(field);
                }
            }
            return Optional.empty();
        }
    }

    /** One of the container's {@code env} variables. */
    public record EnvVar(JsonObject env, String path) {
        public String name() throws InvalidReviewException {
            return Json.stringOrEmpty(env, "name", path);
        }

        /** The Secret of {@code valueFrom.secretKeyRef} ("" when it names none), if the value comes from one. */
        public Optional<String> secretKeyRefName() throws InvalidReviewException {
            JsonObject secretKeyRef = secretKeyRef();
            return secretKeyRef == null ? Optional.empty()
                    : Optional.of(Json.stringOrEmpty(secretKeyRef, "name", path + ".valueFrom.secretKeyRef"));
        }

        public boolean fromSecret() throws InvalidReviewException {
            return secretKeyRef() != null;
        }

        private JsonObject secretKeyRef() throws InvalidReviewException {
            JsonObject valueFrom = Json.object(env, "valueFrom", path);
            return Json.object(valueFrom, "secretKeyRef", path + ".valueFrom");
        }
    }

    /** One of the container's {@code envFrom} sources. */
    public record EnvFrom(JsonObject from, String path) {
        /** The Secret of {@code secretRef} ("" when it names none), if the source is one. */
        public Optional<String> secretRefName() throws InvalidReviewException {
            JsonObject secretRef = Json.object(from, "secretRef", path);
            return secretRef == null ? Optional.empty()
                    : Optional.of(Json.stringOrEmpty(secretRef, "name", path + ".secretRef"));
        }

        public boolean fromSecret() throws InvalidReviewException {
            return Json.object(from, "secretRef", path) != null;
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
        return Json.stringOrEmpty(container, "name", path());
    }

    public List<Mount> volumeMounts() throws InvalidReviewException {
        return items("volumeMounts", Mount::new);
    }

    public List<EnvVar> env() throws InvalidReviewException {
        return items("env", EnvVar::new);
    }

    public List<EnvFrom> envFrom() throws InvalidReviewException {
        return items("envFrom", EnvFrom::new);
    }

    /** The list {@code <field>} of the container, each item seen through {@code view}. */
    private <T> List<T> items(String field, BiFunction<JsonObject, String, T> view) throws InvalidReviewException {
        List<JsonObject> items = Json.objects(container, field, path());
        List<T> views = new ArrayList<>(items.size());
        String itemPath = path() + "." + field + "[]";
        for (JsonObject item : items) {
            views.add(view.apply(item, itemPath));
        }
        return views;
    }
}
