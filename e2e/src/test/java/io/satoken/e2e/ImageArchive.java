package io.satoken.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import com.google.gson.Gson;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.yaml.snakeyaml.LoaderOptions;
import org.yaml.snakeyaml.Yaml;
import org.yaml.snakeyaml.constructor.SafeConstructor;

/**
 * A satoken image archive, {@code <module>/target/<program>-image.tar} (mvn -Pimages package), unpacked: an OCI
 * image layout whose index.json names one image index, which lists one image manifest per platform
 * (images/oci-index.sh writes it so).
 */
final class ImageArchive {

    /** What the images build makes, in the order the image index lists them. */
    static final List<String> ARCHITECTURES = List.of("amd64", "arm64");

    /** One platform's entry in the image index, with the manifest and config it leads to. */
    record Platform(String os, String architecture, Map<String, Object> manifest, Map<String, Object> config) {
    }

    private final Path dir;

    private ImageArchive(Path dir) {
        this.dir = dir;
    }

    /** The archive of {@code program} (satoken-agent, satoken-controlplane) in this tree. */
    static Path of(String program) {
        return E2E.repo().resolve(program.substring("satoken-".length()) + "/target/" + program + "-image.tar");
    }

    /**
     * The full name deploy/images/kustomization.yaml gives {@code program}'s image (newName:newTag): the one
     * place that names the images, which the archives must carry too.
     */
    static String nameInImagesComponent(String program) throws Exception {
        Yaml yaml = new Yaml(new SafeConstructor(new LoaderOptions()));
        Map<?, ?> component = yaml.load(Files.readString(E2E.repo().resolve("deploy/images/kustomization.yaml")));
        Map<?, ?> image = ((List<?>) component.get("images")).stream().map(i -> (Map<?, ?>) i)
                .filter(i -> program.equals(i.get("name"))).findFirst()
                .orElseThrow(() -> new AssertionError("deploy/images/kustomization.yaml names no " + program));
        return image.get("newName") + ":" + image.get("newTag");
    }

    /** Unpacks {@code archive} into {@code into} (created). */
    static ImageArchive unpack(Path archive, Path into) throws Exception {
        Files.createDirectories(into);
        Commands.Result untar = Commands.run("untar-image", List.of("tar", "-xf", archive.toString(), "-C",
                into.toString()));
        assertThat(untar.exit()).as(untar.output()).isZero();
        return new ImageArchive(into);
    }

    /** The one descriptor of index.json: the image index, with the image's name in its annotations. */
    Map<?, ?> top() throws Exception {
        List<?> entries = (List<?>) json(Files.readString(dir.resolve("index.json"))).get("manifests");
        assertThat(entries).as("index.json: one image, named once").hasSize(1);
        return (Map<?, ?>) entries.get(0);
    }

    /** The image's name, as containerd's importer reads it. */
    String name() throws Exception {
        return String.valueOf(((Map<?, ?>) top().get("annotations")).get("io.containerd.image.name"));
    }

    /** The platforms the image index lists, in its order, each checked to be an image manifest. */
    List<Platform> platforms() throws Exception {
        Map<?, ?> top = top();
        assertThat(top.get("mediaType")).isEqualTo("application/vnd.oci.image.index.v1+json");
        Map<String, Object> index = json(blob(top.get("digest")));
        return ((List<?>) index.get("manifests")).stream().map(m -> (Map<?, ?>) m).map(entry -> {
            Map<?, ?> platform = (Map<?, ?>) entry.get("platform");
            assertThat(platform).as("every manifest of the image index names its platform").isNotNull();
            assertThat(entry.get("mediaType")).isEqualTo("application/vnd.oci.image.manifest.v1+json");
            Map<String, Object> manifest = json(blob(entry.get("digest")));
            Map<String, Object> config = json(blob(((Map<?, ?>) manifest.get("config")).get("digest")));
            return new Platform(String.valueOf(platform.get("os")), String.valueOf(platform.get("architecture")),
                    manifest, config);
        }).toList();
    }

    /** The image of {@code architecture}. */
    Platform platform(String architecture) throws Exception {
        return platforms().stream().filter(p -> p.architecture().equals(architecture)).findFirst()
                .orElseThrow(() -> new AssertionError("no " + architecture + " image in " + dir));
    }

    /** Unpacks the layers of {@code platform}'s image, in order, into {@code root} (created): its file system. */
    Path unpackLayers(Platform platform, Path root) throws Exception {
        Files.createDirectories(root);
        for (Object layer : (List<?>) platform.manifest().get("layers")) {
            Path blob = blobPath(((Map<?, ?>) layer).get("digest"));
            // Jib's layers are gzipped tars without whiteouts: unpacked in order, each adds its files
            Commands.Result untar = Commands.run("untar-layer", List.of("tar", "-xzf", blob.toString(), "-C",
                    root.toString()));
            assertThat(untar.exit()).as(untar.output()).isZero();
        }
        return root;
    }

    private String blob(Object digest) {
        try {
            return Files.readString(blobPath(digest));
        } catch (java.io.IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }

    private Path blobPath(Object digest) {
        return dir.resolve("blobs/sha256").resolve(String.valueOf(digest).substring("sha256:".length()));
    }

    @SuppressWarnings("unchecked")
    static Map<String, Object> json(String text) {
        return new Gson().fromJson(text, Map.class);
    }
}
