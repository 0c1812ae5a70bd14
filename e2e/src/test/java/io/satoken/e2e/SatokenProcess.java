package io.satoken.e2e;

import io.satoken.agent.testing.KubeletCsiClient;
import io.satoken.common.testing.PrometheusText;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;

/**
 * One satoken process started from its built launcher ({@code agent/bin/satoken-agent} or
 * {@code controlplane/bin/satoken-controlplane}), exactly as an operator starts it, with its stdout and
 * stderr in a log under {@link E2E#logsDir()}. The launcher {@code exec}s the JVM, so {@link #kill()}
 * is a SIGKILL of the JVM itself.
 */
final class SatokenProcess implements AutoCloseable, KubeletCsiClient.PluginProcess {

    /** Small and quick to start; the tests start hundreds of JVMs. */
    static final String JAVA_OPTS = "-XX:+UseSerialGC -XX:TieredStopAtLevel=1 -Xmx256m";

    private static final HttpClient HTTP = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();
    /** Processes still running when the test JVM exits (a test that failed half-way) are killed with it. */
    private static final Set<Process> LIVE = ConcurrentHashMap.newKeySet();

    static {
        Runtime.getRuntime().addShutdownHook(new Thread(() -> LIVE.forEach(Process::destroyForcibly),
                "satoken-e2e-processes"));
    }

    private final String name;
    private final Process process;
    private final Path log;
    private final String metricsAddress;

    private SatokenProcess(String name, Process process, Path log, String metricsAddress) {
        this.name = name;
        this.process = process;
        this.log = log;
        this.metricsAddress = metricsAddress;
    }

    /** Starts {@code satoken-agent args...}; {@code metricsAddress} is where its /readyz and /metrics are, or null. */
    static SatokenProcess agent(String name, List<String> args, String metricsAddress, Map<String, String> env)
            throws IOException {
        return start(name, E2E.agentLauncher(), args, metricsAddress, env);
    }

    /** Starts {@code satoken-controlplane args...}. */
    static SatokenProcess controlplane(String name, List<String> args, String metricsAddress, Map<String, String> env)
            throws IOException {
        return start(name, E2E.controlplaneLauncher(), args, metricsAddress, env);
    }

    /** Starts any launcher, e.g. the one {@code systemd/install.sh} installed. */
    static SatokenProcess start(String name, Path launcher, List<String> args, String metricsAddress,
            Map<String, String> env) throws IOException {
        List<String> command = new ArrayList<>();
        command.add(launcher.toString());
        command.addAll(args);
        Path log = E2E.newLog(name);
        ProcessBuilder pb = new ProcessBuilder(command)
                .redirectErrorStream(true)
                .redirectOutput(ProcessBuilder.Redirect.appendTo(log.toFile()));
        pb.environment().putIfAbsent("JAVA_OPTS", JAVA_OPTS);
        pb.environment().putAll(env);
        Process process = pb.start();
        LIVE.add(process);
        process.onExit().thenRun(() -> LIVE.remove(process));
        return new SatokenProcess(name, process, log, metricsAddress);
    }

    String name() {
        return name;
    }

    long pid() {
        return process.pid();
    }

    @Override
    public boolean isAlive() {
        return process.isAlive();
    }

    @Override
    public String exitReport() {
        return name + " exited before it registered; log " + log + ":\n" + tail();
    }

    Path log() {
        return log;
    }

    String logText() {
        try {
            return Files.readString(log, StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** Waits until {@code /readyz} answers 200; fails at once if the process exits. */
    SatokenProcess awaitReady(Duration timeout) {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (true) {
            if (!process.isAlive()) {
                throw new AssertionError(name + " exited with " + process.exitValue() + " before it was ready; log "
                        + log + ":\n" + tail());
            }
            try {
                if (get("/readyz").statusCode() == 200) {
                    return this;
                }
            } catch (IOException notYet) {
                // not listening yet
            }
            if (System.nanoTime() > deadline) {
                throw new AssertionError(name + " not ready after " + timeout.toSeconds() + " s; log " + log + ":\n" + tail());
            }
            pause(Duration.ofMillis(100));
        }
    }

    /** The status {@code /healthz} answers with; -1 when nothing answers. */
    int healthz() {
        try {
            return get("/healthz").statusCode();
        } catch (IOException e) {
            return -1;
        }
    }

    /** The Prometheus text on {@code /metrics}. */
    String metrics() {
        try {
            HttpResponse<String> r = get("/metrics");
            if (r.statusCode() != 200) {
                throw new AssertionError(name + " /metrics answered " + r.statusCode());
            }
            return r.body();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** One sample of the metrics: {@code metric("satoken_file_writes_total", "result=\"failure\"")}. */
    double metric(String family, String... labels) {
        return PrometheusText.value(metrics(), family, labels);
    }

    /** SIGTERM, then SIGKILL after 20 s; returns the exit status. */
    int stop() {
        process.destroy();
        if (!waitFor(Duration.ofSeconds(20))) {
            process.destroyForcibly();
            waitFor(Duration.ofSeconds(10));
        }
        return process.isAlive() ? -1 : process.exitValue();
    }

    /** SIGKILL of the JVM, and wait until it is gone. */
    void kill() {
        process.destroyForcibly();
        waitFor(Duration.ofSeconds(10));
    }

    /** Waits for the exit; -1 when still running after {@code timeout}. */
    int awaitExit(Duration timeout) {
        return waitFor(timeout) ? process.exitValue() : -1;
    }

    @Override
    public void close() {
        if (process.isAlive()) {
            stop();
        }
    }

    String tail() {
        List<String> lines = logText().lines().toList();
        return String.join("\n", lines.subList(Math.max(0, lines.size() - 40), lines.size()));
    }

    private HttpResponse<String> get(String path) throws IOException {
        if (metricsAddress == null) {
            throw new IllegalStateException(name + " was started without a metrics address");
        }
        HttpRequest request = HttpRequest.newBuilder(URI.create("http://" + metricsAddress + path))
                .timeout(Duration.ofSeconds(5)).build();
        try {
            return HTTP.send(request, HttpResponse.BodyHandlers.ofString());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IOException("interrupted", e);
        }
    }

    private boolean waitFor(Duration d) {
        try {
            return process.waitFor(d.toMillis(), TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        }
    }

    static void pause(Duration d) {
        try {
            Thread.sleep(d.toMillis());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted", e);
        }
    }
}
