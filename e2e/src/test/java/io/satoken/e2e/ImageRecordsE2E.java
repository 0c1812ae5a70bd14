package io.satoken.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
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
 * build machine or taken from a downloaded package (images/debian-packages.sh) next to the program's SBOM, for
 * each architecture the archive holds.
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
    void imageArchives_recordTheirPackagesAndLibraries_forEachArchitecture(@TempDir Path dir) throws Exception {
        List<String> programs = PROGRAMS.stream().filter(p -> Files.isRegularFile(ImageArchive.of(p))).toList();
        skipUnless(!programs.isEmpty(), "the image archives (mvn -B -q -DskipTests -Pimages package)");
        for (String program : programs) {
            ImageArchive archive = ImageArchive.unpack(ImageArchive.of(program), dir.resolve(program));
            for (String arch : ImageArchive.ARCHITECTURES) {
                String what = program + " " + arch;
                Path root = archive.unpackLayers(archive.platform(arch), dir.resolve(program + "-" + arch));
                Set<String> files = files(root);

                assertThat(files).as(what).contains("usr/share/satoken/debian-packages.txt",
                        "usr/share/satoken/sbom/" + program + ".cdx.json",
                        "usr/share/satoken/sbom/" + program + "-debian.cdx.json", "var/lib/dpkg/status.d/libc6");
                // every shared library and program copied into the image has a row naming its package
                String packages = read(root, "usr/share/satoken/debian-packages.txt");
                List<String> unlisted = new ArrayList<>();
                for (String file : files) {
                    boolean copied = file.matches("(lib|lib64|usr/lib)/.*\\.so[.0-9]*") || file.matches("bin/[^/]+");
                    String row = "\n/" + file + "\t";
                    if (copied && (!packages.contains(row) || packages.contains(row + "-\t"))) {
                        unlisted.add(file);
                    }
                }
                assertThat(unlisted).as(what + ": files without a package row").isEmpty();
                // each row names a package of the image's own architecture (or one for every architecture)
                List<String> otherArch = packages.lines().filter(l -> !l.startsWith("#"))
                        .filter(l -> !List.of(arch, "all").contains(l.split("\t")[3])).toList();
                assertThat(otherArch).as(what + ": rows of another architecture's package").isEmpty();
                assertThat(packages).as(what).contains("\n/bin/sh\tdash\t", "\tlibc6\t");
                // the same records sit next to the archive, one set per architecture
                Path target = ImageArchive.of(program).getParent();
                assertThat(target.resolve(program + "-image-" + arch + "-debian-packages.txt")).content()
                        .isEqualTo(packages);
                assertThat(target.resolve(program + "-image-" + arch + "-debian.cdx.json")).content()
                        .isEqualTo(read(root, "usr/share/satoken/sbom/" + program + "-debian.cdx.json"));
                // the loader is executable (the kernel refuses it otherwise) and of the image's architecture
                String loader = arch.equals("amd64") ? "lib64/ld-linux-x86-64.so.2" : "lib/ld-linux-aarch64.so.1";
                assertThat(root.resolve(loader)).as(what).isExecutable();
                for (String elf : List.of(loader, "opt/java/openjdk/bin/java", "opt/java/openjdk/lib/server/libjvm.so",
                        "bin/sh")) {
                    assertThat(elfMachine(root.resolve(elf))).as(what + ": " + elf).isEqualTo(arch);
                }
                // every jar Jib put under /app/libs is a component of the program's SBOM
                Set<String> jarNames = components(json(read(root, "usr/share/satoken/sbom/" + program + ".cdx.json")))
                        .stream().map(c -> c.get("name") + "-" + c.get("version") + ".jar").collect(Collectors.toSet());
                List<String> missing = files.stream().filter(f -> f.startsWith("app/libs/") && f.endsWith(".jar"))
                        .map(f -> f.substring("app/libs/".length()))
                        .filter(jar -> jarNames.stream().noneMatch(jar::endsWith)).toList();
                assertThat(missing).as(what + ": jars in /app/libs missing from the SBOM").isEmpty();
            }
        }
    }

    @Test
    void imageArchives_holdOneImageIndex_withAManifestPerArchitecture_matchingItsConfig(@TempDir Path dir)
            throws Exception {
        List<String> programs = PROGRAMS.stream().filter(p -> Files.isRegularFile(ImageArchive.of(p))).toList();
        skipUnless(!programs.isEmpty(), "the image archives (mvn -B -q -DskipTests -Pimages package)");
        for (String program : programs) {
            ImageArchive archive = ImageArchive.unpack(ImageArchive.of(program), dir.resolve(program));
            List<ImageArchive.Platform> platforms = archive.platforms();
            assertThat(platforms).extracting(p -> p.os() + "/" + p.architecture()).as(program)
                    .containsExactlyElementsOf(ImageArchive.ARCHITECTURES.stream().map(a -> "linux/" + a).toList());
            for (ImageArchive.Platform platform : platforms) {
                assertThat(platform.config().get("os") + "/" + platform.config().get("architecture"))
                        .as(program + ": the config of the " + platform.architecture() + " manifest")
                        .isEqualTo(platform.os() + "/" + platform.architecture());
            }
        }
    }

    @Test
    void imageArchives_carryTheNamesTheImagesComponentGivesThem(@TempDir Path dir) throws Exception {
        // deploy/images/kustomization.yaml is the one place that names the images; the pom's Jib <to> must agree
        List<String> programs = PROGRAMS.stream().filter(p -> Files.isRegularFile(ImageArchive.of(p))).toList();
        skipUnless(!programs.isEmpty(), "the image archives (mvn -B -q -DskipTests -Pimages package)");
        for (String program : programs) {
            ImageArchive archive = ImageArchive.unpack(ImageArchive.of(program), dir.resolve(program));
            assertThat(archive.name()).as(program).isEqualTo(ImageArchive.nameInImagesComponent(program));
        }
    }

    @Test
    void workloads_runOnLinuxNodesOfTheArchitecturesTheImagesHold(@TempDir Path dir) throws Exception {
        List<String> arches = ImageArchive.ARCHITECTURES;
        for (String program : PROGRAMS) {
            if (Files.isRegularFile(ImageArchive.of(program))) {
                ImageArchive archive = ImageArchive.unpack(ImageArchive.of(program), dir.resolve(program));
                assertThat(archive.platforms()).extracting(ImageArchive.Platform::architecture).as(program)
                        .containsExactlyElementsOf(arches);
            }
        }
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
                    assertThat(selector.get("kubernetes.io/os")).as(manifests).isEqualTo("linux");
                    assertThat(selector.containsKey("kubernetes.io/arch")).as(manifests + ": one architecture")
                            .isFalse();
                    assertThat(requiredArchitectures(podSpec)).as(manifests + ": nodeAffinity, kubernetes.io/arch In")
                            .containsExactlyInAnyOrderElementsOf(arches);
                }
            }
        }
    }

    /** The values of the pod's required node affinity on kubernetes.io/arch (one term, operator In). */
    private static List<String> requiredArchitectures(Map<?, ?> podSpec) {
        Map<?, ?> nodeAffinity = (Map<?, ?>) ((Map<?, ?>) podSpec.get("affinity")).get("nodeAffinity");
        Map<?, ?> required = (Map<?, ?>) nodeAffinity.get("requiredDuringSchedulingIgnoredDuringExecution");
        List<?> terms = (List<?>) required.get("nodeSelectorTerms");
        assertThat(terms).hasSize(1);
        for (Object expression : (List<?>) ((Map<?, ?>) terms.get(0)).get("matchExpressions")) {
            Map<?, ?> e = (Map<?, ?>) expression;
            if ("kubernetes.io/arch".equals(e.get("key")) && "In".equals(e.get("operator"))) {
                return ((List<?>) e.get("values")).stream().map(String::valueOf).toList();
            }
        }
        return List.of();
    }

    /** The architecture an ELF file is built for, from its header's e_machine (little-endian, offset 18). */
    private static String elfMachine(Path elf) throws Exception {
        byte[] header = Arrays.copyOf(Files.readAllBytes(elf), 20);
        int machine = (header[18] & 0xff) | (header[19] & 0xff) << 8;
        return switch (machine) {
            case 0x3e -> "amd64";
            case 0xb7 -> "arm64";
            default -> "e_machine " + machine;
        };
    }

    /** Every regular file under {@code root}, relative to it. */
    private static Set<String> files(Path root) throws Exception {
        try (Stream<Path> walk = Files.walk(root)) {
            return walk.filter(Files::isRegularFile).map(f -> root.relativize(f).toString())
                    .collect(Collectors.toCollection(TreeSet::new));
        }
    }

    private static String read(Path root, String file) throws Exception {
        return Files.readString(root.resolve(file), StandardCharsets.UTF_8);
    }

    private static Map<String, Object> json(String text) {
        return ImageArchive.json(text);
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
