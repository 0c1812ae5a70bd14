package io.satoken.controlplane.admission.view;

import com.google.gson.JsonObject;
import java.util.List;
import java.util.Optional;

/** One of a pod's {@code spec.volumes}, read-only; see {@link PodView}. */
public final class VolumeView {

    private static final String PATH = "spec.volumes[]";

    /** A volume: {@link PodView} includes it as the item of {@code spec.volumes}. */
    static final Field.Obj VOLUME = Field.root();
    private static final Field.Str NAME = VOLUME.string("name");
    private static final Field.Obj SECRET = VOLUME.object("secret");
    private static final Field.Str SECRET_NAME = SECRET.string("secretName");
    private static final Field.Obj PROJECTED = VOLUME.object("projected");
    private static final Field.Items SOURCES = PROJECTED.objects("sources");
    private static final Field.Obj SOURCE_TOKEN = SOURCES.item().object("serviceAccountToken");
    private static final Field.Obj SOURCE_SECRET = SOURCES.item().object("secret");
    private static final Field.Obj AZURE_FILE = VOLUME.object("azureFile");
    private static final Field.Str AZURE_FILE_SECRET_NAME = AZURE_FILE.string("secretName");
    /** The volume kinds whose {@code secretRef} names a Secret, each with its {@code secretRef}. */
    private static final List<SecretRef> SECRET_REFS = SecretRef.of("cephfs", "cinder", "flexVolume", "rbd", "scaleIO",
            "iscsi", "storageos");
    /** {@code csi}, kept whole: {@code admission.AgentTokenInjection} compares it with the one it wants. */
    private static final Field.Obj CSI = VOLUME.whole("csi");
    private static final Field.Str CSI_DRIVER = CSI.string("driver");
    private static final Field.Obj CSI_NODE_PUBLISH_SECRET_REF = CSI.object("nodePublishSecretRef");

    private record SecretRef(Field.Obj kind, Field.Obj secretRef) {
        static List<SecretRef> of(String... kinds) {
            return List.of(kinds).stream().map(VOLUME::object).map(kind -> new SecretRef(kind, kind.object("secretRef")))
                    .toList();
        }
    }

    private final JsonObject volume;

    VolumeView(JsonObject volume) {
        this.volume = volume;
    }

    /** The name, or "" when absent. */
    public String name() throws InvalidReviewException {
        return NAME.readOrEmpty(volume, PATH);
    }

    /** Whether the name is {@code name}. */
    public boolean named(String name) throws InvalidReviewException {
        return name.equals(NAME.read(volume, PATH));
    }

    public boolean isSecret() throws InvalidReviewException {
        return SECRET.present(volume, PATH);
    }

    /** A secret volume's {@code secret.secretName}, if it is a secret volume that names one. */
    public Optional<String> secretName() throws InvalidReviewException {
        JsonObject secret = SECRET.read(volume, PATH);
        return secret == null ? Optional.empty() : Optional.ofNullable(SECRET_NAME.read(secret, PATH + ".secret"));
    }

    /** Whether a projected volume has a {@code serviceAccountToken} source. */
    public boolean projectsServiceAccountToken() throws InvalidReviewException {
        return projectsSource(SOURCE_TOKEN);
    }

    /** AD-9, mirror pods: whether any volume kind that takes a Secret names one, as upstream's visitor looks. */
    public boolean referencesSecret() throws InvalidReviewException {
        if (SECRET.present(volume, PATH)) {
            return true;
        }
        if (AZURE_FILE_SECRET_NAME.has(AZURE_FILE.read(volume, PATH))) {
            return true;
        }
        for (SecretRef ref : SECRET_REFS) {
            if (ref.secretRef().present(ref.kind().read(volume, PATH), PATH + "." + ref.kind().name())) {
                return true;
            }
        }
        if (CSI_NODE_PUBLISH_SECRET_REF.present(CSI.read(volume, PATH), PATH + ".csi")) {
            return true;
        }
        return projectsSource(SOURCE_SECRET);
    }

    private boolean projectsSource(Field.Obj source) throws InvalidReviewException {
        for (JsonObject item : SOURCES.read(PROJECTED.read(volume, PATH), PATH + ".projected")) {
            if (source.present(item, PATH + ".projected.sources[]")) {
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
        return Optional.ofNullable(CSI.read(volume, field));
    }

    /** The {@code csi} source's {@code driver}, if it names one; {@code field} as for {@link #csi}. */
    public Optional<String> csiDriver(String field) throws InvalidReviewException {
        return Optional.ofNullable(CSI_DRIVER.read(CSI.read(volume, field), field + ".csi"));
    }
}
