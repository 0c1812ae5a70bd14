package io.satoken.e2e;

import io.satoken.common.testing.KubeApiServer;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/** kubectl from PATH, as an operator runs it, against a test API server as its admin. */
final class Kubectl {

    private static final Duration TIMEOUT = Duration.ofSeconds(120);

    private final Path kubeconfig;

    private Kubectl(Path kubeconfig) {
        this.kubeconfig = kubeconfig;
    }

    static boolean installed() {
        return Commands.onPath("kubectl");
    }

    /** kubectl as {@code server}'s admin; its kubeconfig is written into the server's work dir. */
    static Kubectl forAdmin(KubeApiServer server) throws IOException {
        if (!installed()) {
            throw new IllegalStateException("kubectl not found on PATH");
        }
        Path kubeconfig = server.workDir().resolve("kubectl-admin.kubeconfig");
        server.writeKubeconfig(kubeconfig, server.adminToken());
        return new Kubectl(kubeconfig);
    }

    /** {@code kubectl args...}, its output in a suite log; exit -1 if it ran past 120 s. */
    Commands.Result run(String... args) throws IOException, InterruptedException {
        List<String> cmd = new ArrayList<>(List.of("kubectl", "--kubeconfig", kubeconfig.toString()));
        cmd.addAll(List.of(args));
        return Commands.run("kubectl", cmd, TIMEOUT);
    }

    /**
     * A kubectl plugin script ({@code agent/bin/kubectl-satoken}) with {@code args}, as this server's admin: the
     * plugin passes {@code --kubeconfig} on to each kubectl it runs. Output in a suite log; exit -1 past 120 s.
     */
    Commands.Result plugin(Path script, String... args) throws IOException, InterruptedException {
        List<String> cmd = new ArrayList<>(List.of(script.toString()));
        cmd.addAll(List.of(args));
        cmd.addAll(List.of("--kubeconfig", kubeconfig.toString()));
        return Commands.run(script.getFileName().toString(), cmd, TIMEOUT);
    }

    /** The client's minor version ({@code kubectl version --client -o json}). */
    int clientMinor() throws IOException, InterruptedException {
        Commands.Result r = run("version", "--client", "-o", "json");
        Matcher m = Pattern.compile("\"minor\"\\s*:\\s*\"(\\d+)").matcher(r.output());
        if (r.exit() != 0 || !m.find()) {
            throw new IOException("kubectl version --client -o json said:\n" + r.output());
        }
        return Integer.parseInt(m.group(1));
    }

    /** {@code kubectl apply -f file}; fails with kubectl's output unless it exits 0. */
    void apply(Path file) throws IOException, InterruptedException {
        Commands.Result r = run("apply", "-f", file.toString());
        if (r.exit() != 0) {
            throw new AssertionError("kubectl apply -f " + file + " exited " + r.exit() + ":\n" + r.output());
        }
    }
}
