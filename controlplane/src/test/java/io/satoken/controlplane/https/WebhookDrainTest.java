package io.satoken.controlplane.https;

import io.satoken.controlplane.admission.Admission;
import io.satoken.controlplane.admission.Verdict;
import static org.assertj.core.api.Assertions.assertThat;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.satoken.controlplane.webhook.AdmissionEndpoint;
import io.satoken.controlplane.webhook.TestCertificates;
import java.io.IOException;
import java.io.InputStream;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import javax.net.ssl.SSLSocket;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@link WebhookServer#drain}: what a rolling update's stopped replica does between SIGTERM and its exit. The
 * drain's delay is a pause the test holds open and releases (no sleeps); a review is held in progress by an
 * admission that waits for the test.
 */
class WebhookDrainTest {

    static final String REVIEW = "{\"apiVersion\":\"admission.k8s.io/v1\",\"kind\":\"AdmissionReview\",\"request\":{"
            + "\"uid\":\"u-%s\",\"resource\":{\"group\":\"\",\"version\":\"v1\",\"resource\":\"pods\"},"
            + "\"operation\":\"CREATE\",\"namespace\":\"ns\",\"name\":\"p\",\"userInfo\":{\"username\":\"alice\"},"
            + "\"object\":{\"kind\":\"Pod\"}}}";

    @TempDir
    Path dir;
    TestCertificates.Pair pair;
    WebhookServer server;
    final CountDownLatch releaseReview = new CountDownLatch(1);
    final CountDownLatch paused = new CountDownLatch(1);
    final CountDownLatch resume = new CountDownLatch(1);
    final List<SSLSocket> sockets = new ArrayList<>();
    /** The drain's delay as the test controls it: it says when it began and ends when the test resumes it. */
    final WebhookServer.Pause pause = duration -> {
        assertThat(duration).isEqualTo(Duration.ofSeconds(5));
        paused.countDown();
        resume.await();
    };

    @BeforeEach
    void start() throws Exception {
        pair = TestCertificates.write(dir.resolve("tls"), "drain");
        ServingCertificate certificate = ServingCertificate.load(pair.cert(), pair.key());
        Admission held = request -> {
            releaseReview.await();
            return Verdict.allow();
        };
        Admission quick = request -> Verdict.allow();
        // a 30 s review deadline: the held review is answered by its admission, not by the deadline
        WebhookServer.Limits limits = new WebhookServer.Limits(1024 * 1024, Duration.ofSeconds(30),
                Duration.ofSeconds(30), Duration.ofSeconds(30), 2, 4, 8 * 1024 * 1024, 8 * 1024 * 1024, 0,
                Duration.ZERO);
        server = new WebhookServer(new InetSocketAddress("127.0.0.1", 0), certificate,
                new AdmissionEndpoint(Map.of("/held", held, "/quick", quick)), limits,
                new WebhookMetrics(new SimpleMeterRegistry(), certificate));
        server.start();
    }

    @AfterEach
    void stop() throws IOException {
        releaseReview.countDown();
        resume.countDown();
        for (SSLSocket socket : sockets) {
            socket.close();
        }
        server.close();
    }

    @Test
    void drain_notReadyAtOnce_answersDuringTheDelay_thenRefusesNewConnections_andFinishesTheReviewInProgress()
            throws Exception {
        SSLSocket inProgress = open();
        send(inProgress, "/held", "held", true);
        Awaitility.await("the held review in progress").atMost(Duration.ofSeconds(10))
                .until(() -> server.requestsInProgress() == 1);
        SSLSocket idle = open();
        send(idle, "/quick", "before", true);
        assertThat(readResponse(idle)).startsWith("HTTP/1.1 200").contains("connection: keep-alive");
        assertThat(server.serving()).isTrue();

        CompletableFuture<Boolean> drained = CompletableFuture.supplyAsync(() -> {
            try {
                return server.drain(Duration.ofSeconds(5), Duration.ofSeconds(30), pause);
            } catch (InterruptedException e) {
                throw new IllegalStateException(e);
            }
        });
        assertThat(paused.await(10, TimeUnit.SECONDS)).as("the drain's delay began").isTrue();

        // during the delay: no longer ready, but a new connection is still answered, and told to close
        assertThat(server.serving()).as("ready while draining").isFalse();
        SSLSocket late = open();
        send(late, "/quick", "during", true);
        String lateAnswer = readResponse(late);
        assertThat(lateAnswer).startsWith("HTTP/1.1 200").contains("connection: close").contains("\"allowed\":true");
        assertThat(late.getInputStream().read()).as("the connection, closed after its answer").isEqualTo(-1);

        resume.countDown();
        // after the delay: the listener is closed, and so is the idle keep-alive connection
        Awaitility.await("the listener closed").atMost(Duration.ofSeconds(10)).until(this::refused);
        assertThat(idle.getInputStream().read()).as("the idle connection, closed").isEqualTo(-1);
        assertThat(drained).as("the drain waits for the review in progress").isNotDone();
        assertThat(server.requestsInProgress()).isEqualTo(1);

        releaseReview.countDown();
        assertThat(readResponse(inProgress)).startsWith("HTTP/1.1 200").contains("\"uid\":\"u-held\"")
                .contains("\"allowed\":true");
        assertThat(drained.get(10, TimeUnit.SECONDS)).as("every review in progress answered").isTrue();
        assertThat(server.requestsInProgress()).isZero();
    }

    @Test
    void drain_reviewStillInProgressAfterTheLimit_returnsFalse() throws Exception {
        SSLSocket inProgress = open();
        send(inProgress, "/held", "held", true);
        Awaitility.await().atMost(Duration.ofSeconds(10)).until(() -> server.requestsInProgress() == 1);
        resume.countDown();

        assertThat(server.drain(Duration.ofSeconds(5), Duration.ZERO, pause)).isFalse();
        assertThat(server.serving()).isFalse();
    }

    @Test
    void reusePort_aSecondServerOnTheSamePort_listensToo_withoutIt_isRefused() throws Exception {
        ServingCertificate certificate = ServingCertificate.load(pair.cert(), pair.key());
        WebhookServer.Limits limits = WebhookServer.Limits.defaults();
        AdmissionEndpoint routes = new AdmissionEndpoint(Map.of("/quick", request -> Verdict.allow()));
        WebhookServer first = new WebhookServer(new InetSocketAddress("127.0.0.1", 0), certificate, routes, limits,
                new WebhookMetrics(new SimpleMeterRegistry(), certificate), true);
        first.start();
        InetSocketAddress shared = first.address();
        WebhookServer second = new WebhookServer(shared, certificate, routes, limits,
                new WebhookMetrics(new SimpleMeterRegistry(), certificate), true);
        WebhookServer third = new WebhookServer(shared, certificate, routes, limits,
                new WebhookMetrics(new SimpleMeterRegistry(), certificate), false);
        try {
            second.start();
            assertThat(second.serving()).isTrue();
            assertThat(second.address()).isEqualTo(shared);
            org.assertj.core.api.Assertions.assertThatThrownBy(third::start)
                    .isInstanceOf(java.net.BindException.class);
        } finally {
            first.close();
            second.close();
            third.close();
        }
    }

    private boolean refused() {
        try {
            SSLSocket socket = (SSLSocket) pair.trustingIt().getSocketFactory().createSocket("127.0.0.1",
                    server.address().getPort());
            socket.close();
            return false;
        } catch (IOException e) {
            return true;
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }

    private SSLSocket open() throws Exception {
        SSLSocket socket = (SSLSocket) pair.trustingIt().getSocketFactory().createSocket("127.0.0.1",
                server.address().getPort());
        socket.setSoTimeout(20_000);
        sockets.add(socket);
        return socket;
    }

    private static void send(SSLSocket socket, String path, String uid, boolean keepAlive) throws IOException {
        byte[] body = String.format(REVIEW, uid).getBytes(StandardCharsets.UTF_8);
        String head = "POST " + path + " HTTP/1.1\r\nHost: webhook\r\nContent-Type: application/json\r\n"
                + "Content-Length: " + body.length + "\r\n" + (keepAlive ? "" : "Connection: close\r\n") + "\r\n";
        socket.getOutputStream().write(head.getBytes(StandardCharsets.US_ASCII));
        socket.getOutputStream().write(body);
        socket.getOutputStream().flush();
    }

    /** One response: its head, lower-cased, and its body, read by its Content-Length. */
    private static String readResponse(SSLSocket socket) throws IOException {
        InputStream in = socket.getInputStream();
        StringBuilder head = new StringBuilder();
        while (!head.toString().endsWith("\r\n\r\n")) {
            int c = in.read();
            if (c < 0) {
                throw new IOException("connection closed after " + head);
            }
            head.append((char) c);
        }
        String lower = head.toString().toLowerCase(java.util.Locale.ROOT);
        int at = lower.indexOf("content-length: ");
        int length = Integer.parseInt(lower.substring(at + 16, lower.indexOf("\r\n", at)).trim());
        byte[] body = in.readNBytes(length);
        return head.substring(0, 9) + lower.substring(9) + new String(body, StandardCharsets.UTF_8);
    }

}
