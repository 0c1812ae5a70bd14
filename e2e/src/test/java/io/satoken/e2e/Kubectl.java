package io.satoken.e2e;

import io.satoken.common.testing.KubeApiServer;
import java.io.File;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

/** kubectl, as an operator runs it, against a test API server as its admin. */
final class Kubectl {

    /** What a run printed (stdout and stderr together) and its exit status. */
    record Result(int status, String output) {
    }

    private final Path binary;
    private final Path kubeconfig;

    private Kubectl(Path binary, Path kubeconfig) {
        this.binary = binary;
        this.kubeconfig = kubeconfig;
    }

    /** The first {@code kubectl} on PATH, if any. */
    static Optional<Path> binary() {
        return Stream.of(System.getenv().getOrDefault("PATH", "").split(File.pathSeparator))
                .filter(s -> !s.isEmpty())
                .map(s -> Path.of(s, "kubectl"))
                .filter(Files::isExecutable)
                .findFirst();
    }

    /** kubectl as {@code server}'s admin; its kubeconfig is written into the server's work dir. */
    static Kubectl forAdmin(KubeApiServer server) throws IOException {
        Path bin = binary().orElseThrow(() -> new IllegalStateException("kubectl not found on PATH"));
        Path kubeconfig = server.workDir().resolve("kubectl-admin.kubeconfig");
        server.writeKubeconfig(kubeconfig, server.adminToken());
        return new Kubectl(bin, kubeconfig);
    }

    Result run(String... args) throws IOException, InterruptedException {
        List<String> cmd = new ArrayList<>(List.of(binary.toString(), "--kubeconfig", kubeconfig.toString()));
        cmd.addAll(List.of(args));
        Path out = E2E.newLog("kubectl");
        Process p = new ProcessBuilder(cmd).redirectErrorStream(true)
                .redirectOutput(ProcessBuilder.Redirect.appendTo(out.toFile())).start();
        if (!p.waitFor(120, TimeUnit.SECONDS)) {
            p.destroyForcibly();
            throw new IOException("kubectl " + String.join(" ", args) + " did not finish in 120 s");
        }
        return new Result(p.exitValue(), Files.readString(out, StandardCharsets.UTF_8));
    }

    /** The client's minor version ({@code kubectl version --client -o json}). */
    int clientMinor() throws IOException, InterruptedException {
        Result r = run("version", "--client", "-o", "json");
        Matcher m = Pattern.compile("\"minor\"\\s*:\\s*\"(\\d+)").matcher(r.output());
        if (r.status() != 0 || !m.find()) {
            throw new IOException("kubectl version --client -o json said:\n" + r.output());
        }
        return Integer.parseInt(m.group(1));
    }

    /** {@code kubectl apply -f file}; fails with kubectl's output unless it exits 0. */
    void apply(Path file) throws IOException, InterruptedException {
        Result r = run("apply", "-f", file.toString());
        if (r.status() != 0) {
            throw new AssertionError("kubectl apply -f " + file + " exited " + r.status() + ":\n" + r.output());
        }
    }
}
