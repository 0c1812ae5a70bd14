package io.satoken.common.health;

import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.io.IOException;
import java.net.BindException;
import java.net.InetSocketAddress;
import java.util.List;
import java.util.Map;
import java.util.function.BooleanSupplier;
import java.util.stream.Collectors;

/**
 * Serves {@code /healthz}, {@code /livez}, {@code /readyz} and {@code /metrics} (Prometheus text) the way
 * Kubernetes components do: 200 "ok" when every check passes, else 503 naming the failing checks, one per line.
 *
 * <p>Constructing it binds nothing; {@link #start()} does. A client that connects and stalls, sends half a
 * request, or never reads its answer must not fail the kubelet's probes (with a fail-closed webhook that would
 * stop pod creation cluster-wide), so the server reads and writes without blocking, under deadlines, and caps
 * the connections one client may hold; see {@link NonBlockingHttpServer} for the limits.
 */
public final class HealthServer implements AutoCloseable {
    /** A named yes/no check; the name is what a failing probe prints. */
    public record Check(String name, BooleanSupplier passing) {}

    private static final String PROMETHEUS_TEXT = "text/plain; version=0.0.4; charset=utf-8";

    private final InetSocketAddress requested;
    private final PrometheusMeterRegistry registry;
    private final List<Check> liveness;
    private final List<Check> readiness;
    private final Limits limits;
    private NonBlockingHttpServer server;

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
        this(address, registry, liveness, readiness, Limits.defaults());
    }

    HealthServer(InetSocketAddress address, PrometheusMeterRegistry registry, List<Check> liveness,
                 List<Check> readiness, Limits limits) {
        this.requested = address;
        this.registry = registry;
        this.liveness = List.copyOf(liveness);
        this.readiness = List.copyOf(readiness);
        this.limits = limits;
    }

    /** Binds the address and starts answering. */
    public synchronized void start() throws IOException {
        if (server != null) {
            throw new IllegalStateException("already started");
        }
        NonBlockingHttpServer s = new NonBlockingHttpServer(requested, this::answer, limits, "health-server");
        try {
            s.start();
        } catch (BindException e) {
            // the JDK's message names neither the address nor the flag; the operator needs both
            BindException named = new BindException("--metrics-address " + requested.getHostString() + ":"
                    + requested.getPort() + ": " + e.getMessage());
            named.initCause(e);
            throw named;
        }
        server = s;
    }

    /** The bound address; with port 0 requested, this tells the port the system chose. */
    public synchronized InetSocketAddress address() {
        if (server == null) {
            throw new IllegalStateException("not started");
        }
        try {
            return (InetSocketAddress) server.address();
        } catch (IOException e) {
            throw new IllegalStateException("the health server's socket is closed", e);
        }
    }

    @Override
    public synchronized void close() {
        if (server != null) {
            server.close();
            server = null;
        }
    }

    private Response answer(Request request) {
        boolean metrics = request.path().equals("/metrics");
        List<Check> checks = switch (request.path()) {
            case "/healthz", "/livez" -> liveness;
            case "/readyz" -> readiness;
            default -> null;
        };
        if (checks == null && !metrics) {
            return Response.text(404, "no endpoint at " + request.path()
                    + "; serving /healthz, /livez, /readyz and /metrics\n");
        }
        if (!request.method().equals("GET") && !request.method().equals("HEAD")) {
            return new Response(405, "text/plain; charset=utf-8", "method not allowed\n", Map.of("Allow", "GET, HEAD"));
        }
        if (metrics) {
            return new Response(200, PROMETHEUS_TEXT, registry.scrape(), Map.of());
        }
        List<String> failing = checks.stream()
                .filter(check -> !passes(check))
                .map(Check::name)
                .collect(Collectors.toList());
        if (failing.isEmpty()) {
            return Response.text(200, "ok\n");
        }
        return Response.text(503, failing.stream().map(name -> "[-]" + name + " failed\n").collect(Collectors.joining())
                + "check failed\n");
    }

    private static boolean passes(Check check) {
        try {
            return check.passing().getAsBoolean();
        } catch (RuntimeException e) {
            return false;
        }
    }
}
