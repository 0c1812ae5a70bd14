package io.satoken.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import com.google.gson.Gson;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.yaml.snakeyaml.LoaderOptions;
import org.yaml.snakeyaml.Yaml;
import org.yaml.snakeyaml.constructor.SafeConstructor;

/**
 * What the build records about its jars and images: each shipped jar's CycloneDX SBOM
 * ({@code target/<artifactId>.cdx.json}), and, in each image, the Debian package of every file copied from the
 * build machine (images/debian-packages.sh) next to the program's SBOM.
 */
class ImageRecordsE2E {

    private static final List<String> PROGRAMS = List.of("satoken-agent", "satoken-controlplane");

    @Test
    void jarSboms_listTheRuntimeLibraries() throws Exception {
        for (String program : PROGRAMS) {
            Path sbom = E2E.repo().resolve(program.substring("satoken-".length()) + "/target/" + program + ".cdx.json");
            assertThat(sbom).as("made by mvn package (cyclonedx-maven-plugin)").isRegularFile();
            Map<String, Object> bom = json(Files.readString(sbom));
            assertThat(bom.get("bomFormat")).isEqualTo("CycloneDX");
            assertThat(componentNames(bom)).as(program).contains("satoken-common", "client-java", "picocli")
                    .doesNotContain("junit-jupiter-api", "assertj-core");
        }
    }

    @Test
    void debianPackages_namesTheOwnerOfEachFile(@TempDir Path dir) throws Exception {
        skipUnless(Commands.onPath("dpkg-query") && Commands.onPath("dash"), "dpkg-query and dash (a Debian machine)");
        Path dash = Path.of(Commands.run("which-dash", List.of("sh", "-c", "command -v dash")).output().strip())
                .toRealPath();
        Path stray = Files.writeString(dir.resolve("stray"), "no package owns this");
        Path root = dir.resolve("root");
        Path input = Files.writeString(dir.resolve("copied"),
                "/bin/sh\t" + dash + "\n/usr/local/bin/stray\t" + stray + "\n");

        Commands.Result result = Commands.run("debian-packages", List.of("bash", "-c",
                "\"$0\" \"$1\" satoken-test < \"$2\"", E2E.repo().resolve("images/debian-packages.sh").toString(),
                root.toString(), input.toString()));

        assertThat(result.exit()).as(result.output()).isZero();
        assertThat(result.output()).contains("/usr/local/bin/stray: no Debian package owns " + stray);
        List<String> rows = Files.readAllLines(root.resolve("usr/share/satoken/debian-packages.txt")).stream()
                .filter(line -> !line.startsWith("#")).toList();
        assertThat(rows).hasSize(2);
        assertThat(rows.get(0)).startsWith("/bin/sh\tdash\t");
        assertThat(rows.get(1)).isEqualTo("/usr/local/bin/stray\t-\t-\t-\t-\t-");
        assertThat(root.resolve("var/lib/dpkg/status.d/dash")).content()
                .contains("Package: dash\n", "Status: install ok installed\n", "Version: ");
        Map<String, Object> bom =
                json(Files.readString(root.resolve("usr/share/satoken/sbom/satoken-test-debian.cdx.json")));
        assertThat(componentNames(bom)).containsExactly("dash");
        assertThat(String.valueOf(components(bom).get(0).get("purl"))).startsWith("pkg:deb/").contains("/dash@");
    }

    @Test
    void imageArchives_recordTheirPackagesAndLibraries(@TempDir Path dir) throws Exception {
        List<String> programs = PROGRAMS.stream().filter(p -> Files.isRegularFile(archive(p))).toList();
        skipUnless(!programs.isEmpty(), "the image archives (mvn -B -q -DskipTests -Pimages package)");
        for (String program : programs) {
            Path unpacked = Files.createDirectories(dir.resolve(program));
            Set<String> files = imageFiles(archive(program), unpacked);

            assertThat(files).as(program).contains("usr/share/satoken/debian-packages.txt",
                    "usr/share/satoken/sbom/" + program + ".cdx.json",
                    "usr/share/satoken/sbom/" + program + "-debian.cdx.json", "var/lib/dpkg/status.d/libc6");
            // every shared library and program copied from the machine has a row naming its package
            String packages = read(unpacked, "usr/share/satoken/debian-packages.txt");
            List<String> unlisted = new ArrayList<>();
            for (String file : files) {
                boolean copied = file.matches("(lib|lib64|usr/lib)/.*\\.so[.0-9]*") || file.matches("bin/[^/]+");
                if (copied && (!packages.contains("\n/" + file + "\t") || packages.contains("\n/" + file + "\t-\t"))) {
                    unlisted.add(file);
                }
            }
            assertThat(unlisted).as(program + ": files without a package row").isEmpty();
            // every jar Jib put under /app/libs is a component of the program's SBOM
            Set<String> jarNames = components(json(read(unpacked, "usr/share/satoken/sbom/" + program + ".cdx.json")))
                    .stream().map(c -> c.get("name") + "-" + c.get("version") + ".jar").collect(Collectors.toSet());
            List<String> missing = files.stream().filter(f -> f.startsWith("app/libs/") && f.endsWith(".jar"))
                    .map(f -> f.substring("app/libs/".length()))
                    .filter(jar -> jarNames.stream().noneMatch(jar::endsWith)).toList();
            assertThat(missing).as(program + ": jars in /app/libs missing from the SBOM").isEmpty();
        }
    }

    @Test
    void workloads_runOnlyOnTheImagesPlatform(@TempDir Path dir) throws Exception {
        // Jib builds linux/amd64 unless the pom names other platforms (it names none); an archive says for sure
        String platform = "linux/amd64";
        for (String program : PROGRAMS) {
            if (Files.isRegularFile(archive(program))) {
                Path unpacked = Files.createDirectories(dir.resolve(program));
                Commands.Result untar = Commands.run("untar-image", List.of("tar", "-xf", archive(program).toString(),
                        "-C", unpacked.toString()));
                assertThat(untar.exit()).as(untar.output()).isZero();
                Map<String, Object> index = json(Files.readString(unpacked.resolve("index.json")));
                Map<?, ?> first = (Map<?, ?>) ((List<?>) index.get("manifests")).get(0);
                Map<String, Object> manifest = json(blob(unpacked, first.get("digest")));
                Map<String, Object> config = json(blob(unpacked, ((Map<?, ?>) manifest.get("config")).get("digest")));
                assertThat(config.get("os") + "/" + config.get("architecture")).as(program).isEqualTo(platform);
            }
        }
        String[] osArch = platform.split("/");
        for (String manifests : List.of("agent/deploy/30-daemonset.yaml", "controlplane/deploy/30-deployment.yaml",
                "controlplane/deploy/35-webhook-deployment.yaml")) {
            Yaml yaml = new Yaml(new SafeConstructor(new LoaderOptions()));
            for (Object doc : yaml.loadAll(Files.readString(E2E.repo().resolve(manifests)))) {
                Map<?, ?> object = (Map<?, ?>) doc;
                if (List.of("DaemonSet", "Deployment").contains(object.get("kind"))) {
                    Map<?, ?> template = (Map<?, ?>) ((Map<?, ?>) object.get("spec")).get("template");
                    Map<?, ?> podSpec = (Map<?, ?>) template.get("spec");
                    Map<?, ?> selector = (Map<?, ?>) podSpec.get("nodeSelector");
                    assertThat(selector).as(manifests + ": nodeSelector").isNotNull();
                    assertThat(selector.get("kubernetes.io/os")).as(manifests).isEqualTo(osArch[0]);
                    assertThat(selector.get("kubernetes.io/arch")).as(manifests).isEqualTo(osArch[1]);
                }
            }
        }
    }

    private static String blob(Path unpacked, Object digest) throws Exception {
        String hex = String.valueOf(digest).substring("sha256:".length());
        return Files.readString(unpacked.resolve("blobs/sha256").resolve(hex));
    }

    private static Path archive(String program) {
        return E2E.repo().resolve(program.substring("satoken-".length()) + "/target/" + program + "-image.tar");
    }

    /** The files of every layer of the OCI archive; the layers are unpacked into {@code into}. */
    private static Set<String> imageFiles(Path archive, Path into) throws Exception {
        Commands.Result untar = Commands.run("untar-image",
                List.of("tar", "-xf", archive.toString(), "-C", into.toString()));
        assertThat(untar.exit()).as(untar.output()).isZero();
        Set<String> files = new TreeSet<>();
        Path layers = Files.createDirectories(into.resolve("layers"));
        try (Stream<Path> blobs = Files.list(into.resolve("blobs/sha256"))) {
            for (Path blob : blobs.toList()) {
                // the config and manifest blobs are JSON, not gzipped tars: tar refuses them
                Commands.Result layer = Commands.run("untar-layer", List.of("tar", "-xzf", blob.toString(), "-C",
                        layers.toString()));
                if (layer.exit() == 0) {
                    try (Stream<Path> walk = Files.walk(layers)) {
                        walk.filter(Files::isRegularFile).forEach(f -> files.add(layers.relativize(f).toString()));
                    }
                }
            }
        }
        return files;
    }

    private static String read(Path unpacked, String file) throws Exception {
        return Files.readString(unpacked.resolve("layers").resolve(file), StandardCharsets.UTF_8);
    }

    @SuppressWarnings("unchecked")
    private static Map<String, Object> json(String text) {
        return new Gson().fromJson(text, Map.class);
    }

    @SuppressWarnings("unchecked")
    private static List<Map<String, Object>> components(Map<String, Object> bom) {
        return (List<Map<String, Object>>) bom.getOrDefault("components", List.of());
    }

    private static List<String> componentNames(Map<String, Object> bom) {
        return components(bom).stream().map(c -> String.valueOf(c.get("name"))).toList();
    }

    private static void skipUnless(boolean present, String what) {
        if (!present) {
            String test = StackWalker.getInstance().walk(s -> s.skip(1).findFirst().orElseThrow().getMethodName());
            System.err.println("*** SKIPPED ImageRecordsE2E." + test + ": needs " + what + " ***");
            Assumptions.assumeTrue(false, "needs " + what);
        }
    }
}
