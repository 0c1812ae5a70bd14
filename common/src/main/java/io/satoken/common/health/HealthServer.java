package io.satoken.common.health;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.io.IOException;
import java.net.BindException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.function.BooleanSupplier;
import java.util.stream.Collectors;

/**
 * Serves {@code /healthz}, {@code /readyz} and {@code /metrics} (Prometheus text) the way Kubernetes
 * components do: 200 "ok" when every check passes, else 503 naming the failing checks, one per line.
 *
 * <p>Constructing it binds nothing; {@link #start()} does. One worker thread: probes and scrapes are
 * cheap and rare, and a slow scraper must not grow the process.
 */
public final class HealthServer implements AutoCloseable {
    /** A named yes/no check; the name is what a failing probe prints. */
    public record Check(String name, BooleanSupplier passing) {}

    private static final String PROMETHEUS_TEXT = "text/plain; version=0.0.4; charset=utf-8";

    private final InetSocketAddress requested;
    private final PrometheusMeterRegistry registry;
    private final List<Check> liveness;
    private final List<Check> readiness;
    private HttpServer server;
    private ExecutorService executor;

    /**
     * Parses a {@code --metrics-address} value: {@code HOST:PORT}, the host possibly a bracketed IPv6 literal.
     *
     * @throws IllegalArgumentException naming the flag and the expected form
     */
    public static InetSocketAddress parseAddress(String flag, String value) {
        int colon = value.lastIndexOf(':');
        try {
            String host = value.substring(0, colon);
            int port = Integer.parseInt(value.substring(colon + 1));
            if (colon < 1 || port < 0 || port > 65535) {
                throw new IllegalArgumentException();
            }
            return new InetSocketAddress(host.startsWith("[") ? host.substring(1, host.length() - 1) : host, port);
        } catch (RuntimeException e) {
            throw new IllegalArgumentException(flag + ": expected HOST:PORT, got \"" + value + "\"", e);
        }
    }

    public HealthServer(InetSocketAddress address, PrometheusMeterRegistry registry,
                        List<Check> liveness, List<Check> readiness) {
        this.requested = address;
        this.registry = registry;
        this.liveness = List.copyOf(liveness);
        this.readiness = List.copyOf(readiness);
    }

    /** Binds the address and starts answering. */
    public synchronized void start() throws IOException {
        if (server != null) {
            throw new IllegalStateException("already started");
        }
        HttpServer s;
        try {
            s = HttpServer.create(requested, 16);
        } catch (BindException e) {
            // the JDK's message names neither the address nor the flag; the operator needs both
            BindException named = new BindException("--metrics-address " + requested.getHostString() + ":"
                    + requested.getPort() + ": " + e.getMessage());
            named.initCause(e);
            throw named;
        }
        s.createContext("/healthz", exchange -> answerChecks(exchange, liveness));
        s.createContext("/livez", exchange -> answerChecks(exchange, liveness));
        s.createContext("/readyz", exchange -> answerChecks(exchange, readiness));
        s.createContext("/metrics", this::answerMetrics);
        executor = Executors.newSingleThreadExecutor(r -> {
            Thread t = new Thread(r, "health-server");
            t.setDaemon(true);
            return t;
        });
        s.setExecutor(executor);
        s.start();
        server = s;
    }

    /** The bound address; with port 0 requested, this tells the port the system chose. */
    public synchronized InetSocketAddress address() {
        if (server == null) {
            throw new IllegalStateException("not started");
        }
        return server.getAddress();
    }

    @Override
    public synchronized void close() {
        if (server != null) {
            server.stop(0);
            executor.shutdownNow();
            server = null;
        }
    }

    private static void answerChecks(HttpExchange exchange, List<Check> checks) throws IOException {
        if (!isRead(exchange)) {
            return;
        }
        List<String> failing = checks.stream()
                .filter(check -> !passes(check))
                .map(Check::name)
                .collect(Collectors.toList());
        if (failing.isEmpty()) {
            respond(exchange, 200, "text/plain; charset=utf-8", "ok\n");
        } else {
            String body = failing.stream().map(name -> "[-]" + name + " failed\n").collect(Collectors.joining())
                    + "check failed\n";
            respond(exchange, 503, "text/plain; charset=utf-8", body);
        }
    }

    private void answerMetrics(HttpExchange exchange) throws IOException {
        if (isRead(exchange)) {
            respond(exchange, 200, PROMETHEUS_TEXT, registry.scrape());
        }
    }

    private static boolean passes(Check check) {
        try {
            return check.passing().getAsBoolean();
        } catch (RuntimeException e) {
            return false;
        }
    }

    private static boolean isRead(HttpExchange exchange) throws IOException {
        String method = exchange.getRequestMethod();
        if (method.equals("GET") || method.equals("HEAD")) {
            return true;
        }
        exchange.getResponseHeaders().set("Allow", "GET, HEAD");
        respond(exchange, 405, "text/plain; charset=utf-8", "method not allowed\n");
        return false;
    }

    private static void respond(HttpExchange exchange, int status, String contentType, String body)
            throws IOException {
        byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
        exchange.getResponseHeaders().set("Content-Type", contentType);
        boolean head = exchange.getRequestMethod().equals("HEAD");
        exchange.sendResponseHeaders(status, head ? -1 : bytes.length);
        try (OutputStream out = exchange.getResponseBody()) {
            if (!head) {
                out.write(bytes);
            }
        }
    }
}
