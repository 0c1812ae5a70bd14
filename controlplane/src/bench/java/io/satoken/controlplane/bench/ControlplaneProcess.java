package io.satoken.controlplane.bench;

import io.satoken.common.testing.ManagedProcess;
import io.satoken.common.testing.PrometheusText;
import java.io.IOException;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.stream.Stream;

/**
 * The control plane as the load drivers run it: its shaded jar as a process of its own, started with this JDK's
 * java, and what its {@code /readyz}, {@code /metrics} and log say.
 */
final class ControlplaneProcess {

    /** The jar {@code mvn install} builds, relative to the controlplane module (where exec:exec runs). */
    static final Path JAR = Path.of("target", "satoken-controlplane.jar");

    private ControlplaneProcess() {
    }

    /** {@code jar}, which must be there: the drivers run after an install. */
    static Path requireJar(Path jar) {
        if (!Files.isRegularFile(jar)) {
            throw new IllegalStateException(jar.toAbsolutePath() + " missing: run mvn -B -q -o -DskipTests install first");
        }
        return jar;
    }

    /** {@code java JAVA_OPTS MORE_JVM_OPTIONS -jar JAR run --kubeconfig KUBECONFIG RUN_ARGS}. */
    static List<String> command(String javaOpts, List<String> moreJvmOptions, Path jar, Path kubeconfig,
            List<String> runArgs) {
        List<String> command = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "java")
                .toString()));
        command.addAll(List.of(javaOpts.strip().split("\\s+")));
        command.addAll(moreJvmOptions);
        command.addAll(List.of("-jar", jar.toString(), "run", "--kubeconfig", kubeconfig.toString()));
        command.addAll(runArgs);
        return command;
    }

    static int freePort() throws IOException {
        try (ServerSocket s = new ServerSocket(0)) {
            return s.getLocalPort();
        }
    }

    /**
     * Waits (at most 60 s) until {@code /readyz} on {@code port} answers 200 and {@code /metrics} names each of
     * {@code metrics}; fails at once when the process exits.
     */
    static void awaitReady(HttpClient http, int port, Process p, String... metrics) throws Exception {
        ManagedProcess.of("control plane", p, null).awaitReady("/readyz 200 and " + List.of(metrics) + " on /metrics",
                () -> http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/readyz")).build(),
                        HttpResponse.BodyHandlers.ofString()).statusCode() == 200 && names(metrics(http, port), metrics),
                Duration.ofSeconds(60));
    }

    private static boolean names(String scrape, String... metrics) {
        for (String metric : metrics) {
            if (!scrape.contains(metric)) {
                return false;
            }
        }
        return true;
    }

    static String metrics(HttpClient http, int port) throws IOException, InterruptedException {
        return http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/metrics")).build(),
                HttpResponse.BodyHandlers.ofString()).body();
    }

    /** Its satoken_api_requests_total by "VERB CODE". */
    static Map<String, Double> apiRequests(HttpClient http, int port) throws IOException, InterruptedException {
        Map<String, Double> out = new TreeMap<>();
        PrometheusText.Family family = PrometheusText.parse(metrics(http, port)).families().get("satoken_api_requests_total");
        for (PrometheusText.Sample s : family == null ? List.<PrometheusText.Sample>of() : family.samples()) {
            out.merge(s.labels().get("verb") + " " + s.labels().get("code"), Double.parseDouble(s.value()), Double::sum);
        }
        return out;
    }

    /** The counts that moved from {@code before} to {@code after} (two {@link #apiRequests} readings), by key. */
    static Map<String, Long> moved(Map<String, Double> before, Map<String, Double> after) {
        Map<String, Long> delta = new TreeMap<>();
        after.forEach((k, v) -> delta.put(k, Math.round(v - before.getOrDefault(k, 0.0))));
        delta.values().removeIf(v -> v == 0);
        return delta;
    }

    /** Heap in use, all pools (jvm_memory_used_bytes, area heap), in bytes. */
    static double heap(HttpClient http, int port) throws IOException, InterruptedException {
        return PrometheusText.value(metrics(http, port), "jvm_memory_used_bytes", "area=\"heap\"");
    }

    /** SIGTERM, and up to 10 s for the exit; then what its log says ({@link #logWarnings}). */
    static String stop(Process cp, Path log) throws IOException, InterruptedException {
        cp.destroy();
        ManagedProcess.of("control plane", cp, log).waitFor(Duration.ofSeconds(10));
        return logWarnings(log);
    }

    /**
     * After a run or a failed one: kills the process if it still runs ({@code null}: it never started), and
     * deletes the driver's work directory (the kubeconfig, the log) unless it is kept.
     */
    static void cleanUp(Process cp, Path work, boolean keep) throws IOException {
        if (cp != null && cp.isAlive()) {
            cp.destroyForcibly();
        }
        if (!keep) {
            try (Stream<Path> all = Files.walk(work)) {
                for (Path p : all.sorted((a, b) -> b.compareTo(a)).toList()) {
                    Files.deleteIfExists(p);
                }
            }
        }
    }

    /** "control plane log: N WARN/ERROR/exception lines", and the first 20 of them. */
    static String logWarnings(Path log) throws IOException {
        List<String> warnings = Files.readAllLines(log).stream()
                .filter(l -> l.contains(" WARN ") || l.contains(" ERROR ") || l.contains("Exception")).toList();
        return "control plane log: " + warnings.size() + " WARN/ERROR/exception lines" + (warnings.isEmpty() ? ""
                : ":\n  " + String.join("\n  ", warnings.subList(0, Math.min(20, warnings.size()))));
    }
}
