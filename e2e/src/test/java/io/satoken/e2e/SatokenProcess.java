package io.satoken.e2e;

import io.satoken.agent.testing.KubeletCsiClient;
import io.satoken.common.testing.ManagedProcess;
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

    private final String name;
    private final ManagedProcess process;
    private final Path log;
    private final String metricsAddress;

    private SatokenProcess(String name, ManagedProcess process, Path log, String metricsAddress) {
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
        ProcessBuilder pb = new ProcessBuilder(command);
        pb.environment().putIfAbsent("JAVA_OPTS", JAVA_OPTS);
        pb.environment().putAll(env);
        return new SatokenProcess(name, ManagedProcess.start(name, pb, log).killedOnExit(), log, metricsAddress);
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
        try {
            process.awaitReady("/readyz 200", () -> get("/readyz").statusCode() == 200, timeout);
            return this;
        } catch (IOException e) {
            throw new AssertionError(e.getMessage(), e);
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
        return process.stop(Duration.ofSeconds(20));
    }

    /** SIGKILL of the JVM, and wait until it is gone. */
    void kill() {
        process.kill();
    }

    /** Waits for the exit; -1 when still running after {@code timeout}. */
    int awaitExit(Duration timeout) {
        return process.waitFor(timeout) ? process.exitValue() : -1;
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

    static void pause(Duration d) {
        ManagedProcess.sleep(d);
    }
}
