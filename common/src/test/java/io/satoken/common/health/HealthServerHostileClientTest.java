package io.satoken.common.health;

import static org.assertj.core.api.Assertions.assertThat;

import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketException;
import java.net.SocketTimeoutException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The first security review: clients that connect and stall, send half a request, trickle it, never read the answer,
 * or open many connections must not stop {@code /healthz} from answering, since both control-plane replicas
 * failing their probes stops pod creation cluster-wide. Attackers connect from 127.0.0.2 and up, the probe from
 * 127.0.0.1, as a pod and the kubelet have different addresses.
 */
class HealthServerHostileClientTest {
    /** Generous for a loaded 2-core machine; the old single-threaded server never answers at all. */
    private static final Duration PROBE_TIMEOUT = Duration.ofSeconds(3);
    /** Longer than any deadline the server under test has. */
    private static final int CLOSE_WAIT_MILLIS = 15_000;

    private final PrometheusMeterRegistry registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
    private final List<Socket> attackers = new ArrayList<>();
    private final ScheduledExecutorService trickle = Executors.newSingleThreadScheduledExecutor();
    private HealthServer server;

    @AfterEach
    void stop() throws IOException {
        trickle.shutdownNow();
        for (Socket socket : attackers) {
            socket.close();
        }
        server.close();
    }

    @Test
    void silentConnections_moreThanTheWorkers_doNotDelayHealthz() throws Exception {
        start(Limits.defaults());
        for (int i = 0; i < 6; i++) {
            attack(2, "");
        }

        assertThat(probe("/healthz")).isEqualTo(200);
    }

    @Test
    void halfRequestLines_moreThanTheWorkers_doNotDelayHealthz() throws Exception {
        start(Limits.defaults());
        for (int i = 0; i < 6; i++) {
            attack(2, "GET /hea");
        }

        assertThat(probe("/healthz")).isEqualTo(200);
        assertThat(probe("/readyz")).isEqualTo(200);
    }

    @Test
    void answerNeverRead_doesNotDelayHealthz() throws Exception {
        // a failing check's name is printed in /readyz, which makes an answer larger than any socket buffers
        String huge = "x".repeat(16 * 1024 * 1024);
        server = new HealthServer(new InetSocketAddress("127.0.0.1", 0), registry,
                List.of(new HealthServer.Check("ping", () -> true)),
                List.of(new HealthServer.Check(huge, () -> false)));
        server.start();
        for (int i = 0; i < 3; i++) {
            Socket reader = new Socket();
            reader.setReceiveBufferSize(4096);
            reader.bind(new InetSocketAddress(InetAddress.getByName("127.0.0.2"), 0));
            reader.connect(server.address());
            attackers.add(reader);
            send(reader, "GET /readyz HTTP/1.1\r\nHost: x\r\n\r\n");
        }

        assertThat(probe("/healthz")).isEqualTo(200);
    }

    @Test
    void stalledRequest_isClosedAtTheReadTimeout() throws Exception {
        start(limits(Duration.ofMillis(300), 64, 8));
        Socket silent = attack(2, "");
        Socket half = attack(2, "GET /healthz HTTP/1.1\r\nHost:");

        assertThat(closedByServer(silent)).isTrue();
        assertThat(closedByServer(half)).isTrue();
    }

    @Test
    void trickledRequest_isClosedAtTheReadTimeout_notKeptAliveByEachByte() throws Exception {
        start(limits(Duration.ofMillis(500), 64, 8));
        Socket slow = attack(2, "G");
        trickle.scheduleAtFixedRate(() -> {
            try {
                send(slow, "E");
            } catch (IOException e) {
                trickle.shutdown(); // closed: what the test waits for
            }
        }, 50, 50, TimeUnit.MILLISECONDS);

        long started = System.nanoTime();
        assertThat(closedByServer(slow)).isTrue();
        assertThat(Duration.ofNanos(System.nanoTime() - started)).isLessThan(Duration.ofSeconds(10));
    }

    @Test
    void oneClient_holdsAtMostItsShareOfConnections_itsOldestWaitingOneIsClosedFirst() throws Exception {
        start(Limits.defaults()); // 8 per client
        Socket oldest = attack(2, "GET /hea");
        for (int i = 0; i < 8; i++) {
            attack(2, "GET /hea");
        }

        assertThat(closedByServer(oldest)).isTrue();
        assertThat(probe("/healthz")).isEqualTo(200);
    }

    @Test
    void manyClients_holdAtMostTheServersConnections_andAProbeStillGetsIn() throws Exception {
        start(limits(Duration.ofSeconds(30), 6, 2));
        Socket oldest = attack(2, "");
        attack(2, "");
        for (int client = 3; client <= 5; client++) {
            attack(client, "GET /");
            attack(client, "GET /");
        }

        assertThat(closedByServer(oldest)).isTrue();
        assertThat(probe("/healthz")).isEqualTo(200);
    }

    @Test
    void oversizedHeaders_areRefusedWith431() throws Exception {
        start(Limits.defaults());
        Socket big = attack(2, "GET /healthz HTTP/1.1\r\nX-Filler: " + "a".repeat(9000) + "\r\n\r\n");

        assertThat(answer(big)).startsWith("HTTP/1.1 431 ");
    }

    // --- helpers ---------------------------------------------------------------------------------

    private void start(Limits limits) throws IOException {
        server = new HealthServer(new InetSocketAddress("127.0.0.1", 0), registry,
                List.of(new HealthServer.Check("ping", () -> true)),
                List.of(new HealthServer.Check("ready", () -> true)),
                limits);
        server.start();
    }

    private static Limits limits(Duration readTimeout, int connections, int perClient) {
        return new Limits(readTimeout, Duration.ofSeconds(10), 8192, connections, perClient, 2);
    }

    /** A connection from 127.0.0.{@code client} that sends {@code bytes} and then nothing. */
    private Socket attack(int client, String bytes) throws IOException {
        Socket socket = new Socket();
        attackers.add(socket);
        socket.bind(new InetSocketAddress(InetAddress.getByName("127.0.0." + client), 0));
        socket.connect(server.address());
        if (!bytes.isEmpty()) {
            send(socket, bytes);
        }
        return socket;
    }

    private static void send(Socket socket, String bytes) throws IOException {
        OutputStream out = socket.getOutputStream();
        out.write(bytes.getBytes(StandardCharsets.US_ASCII));
        out.flush();
    }

    /** True once the server has closed the connection; false if it still holds it after every deadline. */
    private static boolean closedByServer(Socket socket) throws IOException {
        socket.setSoTimeout(CLOSE_WAIT_MILLIS);
        InputStream in = socket.getInputStream();
        try {
            while (in.read() >= 0) {
                // an answer before the close is fine; the close is what is asserted
            }
            return true;
        } catch (SocketException reset) {
            return true;
        } catch (SocketTimeoutException e) {
            return false;
        }
    }

    private static String answer(Socket socket) throws IOException {
        socket.setSoTimeout(CLOSE_WAIT_MILLIS);
        return new String(socket.getInputStream().readAllBytes(), StandardCharsets.ISO_8859_1);
    }

    private int probe(String path) throws Exception {
        HttpClient http = HttpClient.newBuilder().connectTimeout(PROBE_TIMEOUT).build();
        return http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + server.address().getPort() + path))
                .timeout(PROBE_TIMEOUT).GET().build(), HttpResponse.BodyHandlers.ofString()).statusCode();
    }
}
