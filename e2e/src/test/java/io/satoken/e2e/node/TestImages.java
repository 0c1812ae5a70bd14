package io.satoken.e2e.node;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

/**
 * The two images a test node runs, built from this machine's packages because no registry is reachable:
 * OCI archives written by {@link OciArchive}, for {@code ctr images import}.
 *
 * <ul>
 *   <li>{@value #BUSYBOX}: Debian's static {@code /bin/busybox} (package busybox-static) with a symlink in
 *       {@code /bin} for every applet it lists ({@code sh}, {@code cat}, {@code ls}, {@code stat},
 *       {@code sleep}, {@code id}...), a minimal {@code /etc/passwd} and a sticky {@code /tmp}. Its default
 *       command is {@code sh}; pods give their own.
 *   <li>{@value #PAUSE}: the pod sandbox image, one static binary compiled here with {@code gcc -static}
 *       from {@link #PAUSE_SOURCE}: it waits in {@code pause()} and exits 0 on SIGTERM or SIGINT.
 * </ul>
 */
public final class TestImages {

    /**
     * The busybox image; pods name it as their container image. Its tag is not {@code latest}, so the
     * default pull policy is IfNotPresent and the kubelet never tries a registry.
     */
    public static final String BUSYBOX = "satoken.test/busybox:1";
    /** The sandbox ("pause") image containerd's CRI plugin is configured with. */
    public static final String PAUSE = "satoken.test/pause:1";

    static final Path BUSYBOX_BINARY = Path.of("/bin/busybox");

    static final String PAUSE_SOURCE = """
            /* The pod sandbox's only process: holds the namespaces until the kubelet stops the pod. */
            #include <signal.h>
            #include <unistd.h>

            static void stop(int sig) { (void) sig; _exit(0); }

            int main(void) {
                struct sigaction sa = {0};
                sa.sa_handler = stop;
                sigaction(SIGTERM, &sa, 0);
                sigaction(SIGINT, &sa, 0);
                for (;;) {
                    pause();
                }
            }
            """;

    /** An image archive and the name it is imported under. */
    public record Image(String ref, Path archive) {
    }

    private TestImages() {
    }

    /** Writes the busybox image archive into {@code dir}. */
    public static Image busybox(Path dir) throws IOException {
        if (!Files.isExecutable(BUSYBOX_BINARY)) {
            throw new IOException(BUSYBOX_BINARY + " is missing: install Debian's busybox-static");
        }
        byte[] busybox = Files.readAllBytes(BUSYBOX_BINARY);
        List<String> applets = HostCommand.check(BUSYBOX_BINARY.toString(), "--list").lines()
                .map(String::strip)
                .filter(a -> !a.isEmpty() && !a.equals("busybox") && !a.contains("/"))
                .toList();
        byte[] layer = TarWriter.toBytes(tar -> {
            tar.directory("bin", 0755);
            tar.file("bin/busybox", 0755, busybox);
            for (String applet : applets) {
                tar.symlink("bin/" + applet, "busybox");
            }
            tar.directory("etc", 0755);
            tar.file("etc/passwd", 0644, "root:x:0:0:root:/root:/bin/sh\nnobody:x:65534:65534:nobody:/:/bin/false\n"
                    .getBytes(StandardCharsets.US_ASCII));
            tar.file("etc/group", 0644, "root:x:0:\nnogroup:x:65534:\n"
                    .getBytes(StandardCharsets.US_ASCII));
            tar.directory("root", 0700);
            tar.directory("tmp", 01777);
        });
        Path archive = dir.resolve("busybox.oci.tar");
        OciArchive.write(archive, BUSYBOX, layer, List.of(), List.of("sh"));
        return new Image(BUSYBOX, archive);
    }

    /** Compiles the pause binary with {@code gcc -static -O2} in {@code dir} and writes its image archive there. */
    public static Image pause(Path dir) throws IOException {
        Path source = dir.resolve("pause.c");
        Path binary = dir.resolve("pause");
        Files.writeString(source, PAUSE_SOURCE);
        HostCommand.check("gcc", "-static", "-O2", "-s", "-o", binary.toString(), source.toString());
        byte[] pause = Files.readAllBytes(binary);
        byte[] layer = TarWriter.toBytes(tar -> tar.file("pause", 0755, pause));
        Path archive = dir.resolve("pause.oci.tar");
        OciArchive.write(archive, PAUSE, layer, List.of("/pause"), List.of());
        return new Image(PAUSE, archive);
    }
}
