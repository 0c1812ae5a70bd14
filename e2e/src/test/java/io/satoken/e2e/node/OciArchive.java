package io.satoken.e2e.node;

import com.google.gson.Gson;
import com.google.gson.GsonBuilder;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Writes a one-layer image as an OCI image-layout archive, the format {@code ctr images import} reads:
 *
 * <pre>
 * oci-layout                      {"imageLayoutVersion": "1.0.0"}
 * index.json                      one manifest, named by its annotations
 * blobs/sha256/&lt;layer&gt;           an uncompressed tar (its digest is also its diff_id)
 * blobs/sha256/&lt;config&gt;          the image config: platform, entrypoint, env, rootfs
 * blobs/sha256/&lt;manifest&gt;        config + layer descriptors
 * </pre>
 *
 * <p>The image is named twice in index.json: {@code org.opencontainers.image.ref.name} (the OCI annotation)
 * and {@code io.containerd.image.name}, which containerd's importer prefers; with both, {@code ctr images
 * import} names it {@code ref} exactly.
 */
final class OciArchive {

    static final String MANIFEST_TYPE = "application/vnd.oci.image.manifest.v1+json";
    static final String CONFIG_TYPE = "application/vnd.oci.image.config.v1+json";
    static final String LAYER_TYPE = "application/vnd.oci.image.layer.v1.tar";

    private static final Gson JSON = new GsonBuilder().disableHtmlEscaping().create();

    private OciArchive() {
    }

    /** Writes the archive of image {@code ref} (e.g. {@code satoken.test/pause:1}) to {@code archive}. */
    static void write(Path archive, String ref, byte[] layer, List<String> entrypoint, List<String> cmd)
            throws IOException {
        String layerDigest = sha256(layer);
        byte[] config = json(ordered(
                "architecture", architecture(),
                "os", "linux",
                "config", ordered(
                        "Entrypoint", entrypoint,
                        "Cmd", cmd,
                        "Env", List.of("PATH=/bin"),
                        "WorkingDir", "/"),
                "rootfs", ordered("type", "layers", "diff_ids", List.of(layerDigest))));
        byte[] manifest = json(ordered(
                "schemaVersion", 2,
                "mediaType", MANIFEST_TYPE,
                "config", descriptor(CONFIG_TYPE, config),
                "layers", List.of(descriptor(LAYER_TYPE, layer))));
        Map<String, Object> manifestEntry = descriptor(MANIFEST_TYPE, manifest);
        manifestEntry.put("platform", ordered("architecture", architecture(), "os", "linux"));
        manifestEntry.put("annotations", ordered(
                "org.opencontainers.image.ref.name", ref,
                "io.containerd.image.name", ref));
        byte[] index = json(ordered(
                "schemaVersion", 2,
                "mediaType", "application/vnd.oci.image.index.v1+json",
                "manifests", List.of(manifestEntry)));

        try (OutputStream out = Files.newOutputStream(archive); TarWriter tar = new TarWriter(out)) {
            tar.file("oci-layout", 0644, json(ordered("imageLayoutVersion", "1.0.0")));
            tar.file("index.json", 0644, index);
            tar.directory("blobs", 0755);
            tar.directory("blobs/sha256", 0755);
            for (byte[] blob : List.of(layer, config, manifest)) {
                tar.file("blobs/sha256/" + hex(blob), 0644, blob);
            }
        }
    }

    /** The OCI name of this JVM's architecture: images must match the node's platform. */
    static String architecture() {
        String arch = System.getProperty("os.arch");
        return switch (arch) {
            case "amd64", "x86_64" -> "amd64";
            case "aarch64", "arm64" -> "arm64";
            default -> arch;
        };
    }

    private static Map<String, Object> descriptor(String mediaType, byte[] blob) {
        return ordered("mediaType", mediaType, "digest", sha256(blob), "size", blob.length);
    }

    private static Map<String, Object> ordered(Object... keysAndValues) {
        Map<String, Object> map = new LinkedHashMap<>();
        for (int i = 0; i < keysAndValues.length; i += 2) {
            map.put((String) keysAndValues[i], keysAndValues[i + 1]);
        }
        return map;
    }

    private static byte[] json(Object value) {
        return JSON.toJson(value).getBytes(StandardCharsets.UTF_8);
    }

    static String sha256(byte[] blob) {
        return "sha256:" + hex(blob);
    }

    private static String hex(byte[] blob) {
        try {
            return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(blob));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }
}
