package io.satoken.controlplane.admission.view;

import com.google.gson.JsonObject;
import java.util.List;
import java.util.Optional;

/** One of a pod's {@code spec.volumes}, read-only; see {@link PodView}. */
public final class VolumeView {

    private static final String PATH = "spec.volumes[]";
    /** The volume kinds whose {@code secretRef} names a Secret. */
    public static final List<String> SECRET_REF_KINDS = List.of("cephfs", "cinder", "flexVolume", "rbd", "scaleIO",
            "iscsi", "storageos");

    private final JsonObject volume;

    VolumeView(JsonObject volume) {
        this.volume = volume;
    }

    /** The name, or "" when absent. */
    public String name() throws InvalidReviewException {
        return Json.stringOrEmpty(volume, "name", PATH);
    }

    /** Whether the name is {@code name}. */
    public boolean named(String name) throws InvalidReviewException {
        return name.equals(Json.string(volume, "name", PATH));
    }

    public boolean isSecret() throws InvalidReviewException {
        return Json.object(volume, "secret", PATH) != null;
    }

    /** A secret volume's {@code secret.secretName}, if it is a secret volume that names one. */
    public Optional<String> secretName() throws InvalidReviewException {
        JsonObject secret = Json.object(volume, "secret", PATH);
        return secret == null ? Optional.empty() : Optional.ofNullable(Json.string(secret, "secretName", PATH + ".secret"));
    }

    /** Whether a projected volume has a {@code serviceAccountToken} source. */
    public boolean projectsServiceAccountToken() throws InvalidReviewException {
        JsonObject projected = Json.object(volume, "projected", PATH);
        for (JsonObject source : Json.objects(projected, "sources", PATH + ".projected")) {
            if (Json.object(source, "serviceAccountToken", PATH + ".projected.sources[]") != null) {
                return true;
            }
        }
        return false;
    }

    /** AD-9, mirror pods: whether any volume kind that takes a Secret names one, as upstream's visitor looks. */
    public boolean referencesSecret() throws InvalidReviewException {
        if (Json.object(volume, "secret", PATH) != null) {
            return true;
        }
        JsonObject azureFile = Json.object(volume, "azureFile", PATH);
        if (azureFile != null && azureFile.has("secretName")) {
            return true;
        }
        for (String kind : SECRET_REF_KINDS) {
            if (Json.object(Json.object(volume, kind, PATH), "secretRef", PATH + "." + kind) != null) {
                return true;
            }
        }
        if (Json.object(Json.object(volume, "csi", PATH), "nodePublishSecretRef", PATH + ".csi") != null) {
            return true;
        }
        JsonObject projected = Json.object(volume, "projected", PATH);
        for (JsonObject source : Json.objects(projected, "sources", PATH + ".projected")) {
            if (Json.object(source, "secret", PATH + ".projected.sources[]") != null) {
                return true;
            }
        }
        return false;
    }

    /**
     * The {@code csi} source, if the volume is one, for comparing with the one wanted; {@code field} is the volume's
     * path in messages (e.g. {@code spec.volumes[satoken-agent-tokens]}).
     */
    public Optional<JsonObject> csi(String field) throws InvalidReviewException {
        return Optional.ofNullable(Json.object(volume, "csi", field));
    }

    /** The {@code csi} source's {@code driver}, if it names one; {@code field} as for {@link #csi}. */
    public Optional<String> csiDriver(String field) throws InvalidReviewException {
        return Optional.ofNullable(Json.string(Json.object(volume, "csi", field), "driver", field + ".csi"));
    }
}
