package io.satoken.controlplane.https;

import static io.satoken.controlplane.admission.AdmissionFixtures.account;
import static io.satoken.controlplane.webhook.ReviewMemory.pod;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.google.gson.JsonObject;
import com.google.gson.JsonParser;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.satoken.controlplane.admission.Admission;
import io.satoken.controlplane.admission.AdmissionFixtures;
import io.satoken.controlplane.admission.PodMutation;
import io.satoken.controlplane.admission.ServiceAccountAdmissionTest;
import io.satoken.controlplane.admission.Verdict;
import io.satoken.controlplane.webhook.AdmissionEndpoint;
import io.satoken.controlplane.webhook.ReviewMemory;
import io.satoken.controlplane.webhook.TestCertificates;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.Principal;
import java.security.PrivateKey;
import java.security.cert.X509Certificate;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import javax.net.ssl.KeyManager;
import javax.net.ssl.SSLEngine;
import javax.net.ssl.X509ExtendedKeyManager;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLSocket;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.bouncycastle.asn1.pkcs.PrivateKeyInfo;
import org.bouncycastle.openssl.PEMParser;
import org.bouncycastle.openssl.jcajce.JcaPEMKeyConverter;

/**
 * The server on loopback over real TLS: what the API server sees for good, malformed, oversized, slow and
 * undecided requests, what clients sending many large bodies at once get (the first security review: bounded memory
 * for bodies), client-certificate authentication, and certificate rotation without a restart. Timeouts are
 * set short; the tests wait on the server's answers or state, never sleep.
 */
class WebhookServerTest {

    static final String REVIEW = "{\"apiVersion\":\"admission.k8s.io/v1\",\"kind\":\"AdmissionReview\",\"request\":{"
            + "\"uid\":\"u-1\",\"resource\":{\"group\":\"\",\"version\":\"v1\",\"resource\":\"pods\"},"
            + "\"operation\":\"CREATE\",\"namespace\":\"ns\",\"name\":\"p\",\"userInfo\":{\"username\":\"alice\"},"
            + "\"object\":%s}}";

    @TempDir
    Path dir;
    TestCertificates.Pair pair;
    ServingCertificate certificate;
    WebhookServer server;
    SimpleMeterRegistry registry = new SimpleMeterRegistry();
    final CountDownLatch release = new CountDownLatch(1);
    final ScheduledExecutorService trickle = Executors.newSingleThreadScheduledExecutor();
    final List<SSLSocket> sockets = new ArrayList<>();

    @BeforeEach
    void start() throws Exception {
        pair = TestCertificates.write(dir.resolve("tls"), "first");
        certificate = ServingCertificate.load(pair.cert(), pair.key());
        serve(certificate, limits(Duration.ofMillis(500), 4 * MIB));
    }

    @AfterEach
    void stop() throws Exception {
        release.countDown();
        trickle.shutdownNow();
        for (SSLSocket socket : sockets) {
            socket.close();
        }
        server.close();
    }

    /** Replaces the running server with one using {@code served} and {@code limits}. */
    private void serve(ServingCertificate served, WebhookServer.Limits limits) throws Exception {
        if (server != null) {
            server.close();
        }
        PodMutation pods = ServiceAccountAdmissionTest.mutation(
                new AdmissionFixtures.Accounts().cache(account("default")), false);
        Admission stuck = request -> {
            release.await();
            return Verdict.allow();
        };
        server = new WebhookServer(new InetSocketAddress("127.0.0.1", 0), served,
                new AdmissionEndpoint(Map.of("/mutate/pods", pods, "/stuck", stuck)), limits,
                new WebhookMetrics(registry, served));
        server.start();
    }

    static final long MIB = 1024 * 1024;

    /**
     * 1 MiB bodies, reviews decided within 300 ms, 2 workers and 4 queued; one client may hold all of the body
     * budget, and no body pace: only the request deadline bounds a slow body.
     */
    private static WebhookServer.Limits limits(Duration requestTimeout, long bodyBudget) {
        return limits(requestTimeout, bodyBudget, bodyBudget, 0, Duration.ZERO);
    }

    /** As {@link #limits(Duration, long)}, with a client's share of the budget and a body pace (0: none). */
    private static WebhookServer.Limits limits(Duration requestTimeout, long bodyBudget, long clientShare,
            long minBodyBytesPerSecond, Duration bodyGrace) {
        return new WebhookServer.Limits((int) MIB, requestTimeout, Duration.ofMillis(300), Duration.ofSeconds(30), 2, 4,
                bodyBudget, clientShare, minBodyBytesPerSecond, bodyGrace);
    }

    @Test
    void podReview_isAnswered_withJsonPatchAndTheRequestsUid() throws Exception {
        HttpResponse<String> response = post("/mutate/pods", String.format(REVIEW, pod(3)));

        assertThat(response.statusCode()).isEqualTo(200);
        assertThat(response.headers().firstValue("content-type")).hasValue("application/json");
        JsonObject answer = responseOf(response);
        assertThat(answer.get("uid").getAsString()).isEqualTo("u-1");
        assertThat(answer.get("allowed").getAsBoolean()).isTrue();
        assertThat(answer.get("patchType").getAsString()).isEqualTo("JSONPatch");
        assertThat(registry.get("satoken_webhook_requests_total").tag("path", "/mutate/pods").tag("result", "patched")
                .counter().count()).isEqualTo(1);
    }

    @Test
    void podReview_thousandContainers_isAnswered() throws Exception {
        HttpResponse<String> response = post("/mutate/pods", String.format(REVIEW, pod(1000)));

        JsonObject answer = responseOf(response);
        assertThat(answer.get("allowed").getAsBoolean()).isTrue();
        String patch = new String(java.util.Base64.getDecoder().decode(answer.get("patch").getAsString()),
                StandardCharsets.UTF_8);
        // serviceAccountName, one mount per container, the volume
        assertThat(JsonParser.parseString(patch).getAsJsonArray()).hasSize(1002);
    }

    @Test
    void body_notJson_deniedReviewNotServerError() throws Exception {
        HttpResponse<String> response = post("/mutate/pods", "{\"apiVersion\": nope");

        assertThat(response.statusCode()).isEqualTo(200);
        JsonObject answer = responseOf(response);
        assertThat(answer.get("allowed").getAsBoolean()).isFalse();
        assertThat(answer.getAsJsonObject("status").get("code").getAsInt()).isEqualTo(400);
        assertThat(answer.getAsJsonObject("status").get("message").getAsString()).startsWith("AdmissionReview: not JSON");
        assertThat(response.body()).doesNotContain("Exception").doesNotContain("\tat ");
    }

    @Test
    void pod_malformed_namesTheField() throws Exception {
        HttpResponse<String> response = post("/mutate/pods", String.format(REVIEW,
                "{\"kind\":\"Pod\",\"spec\":{\"containers\":\"app\"}}"));

        JsonObject answer = responseOf(response);
        assertThat(answer.get("uid").getAsString()).isEqualTo("u-1");
        assertThat(answer.getAsJsonObject("status").get("message").getAsString())
                .isEqualTo("spec.containers: must be a list, got a string");
    }

    @Test
    void body_overTheLimit_refusedWith413AndAReview() throws Exception {
        String huge = String.format(REVIEW, "{\"kind\":\"Pod\",\"metadata\":{\"annotations\":{\"x\":\""
                + "a".repeat(2 * 1024 * 1024) + "\"}}}");

        HttpResponse<String> response = post("/mutate/pods", huge);

        assertThat(response.statusCode()).isEqualTo(413);
        assertThat(responseOf(response).getAsJsonObject("status").get("message").getAsString())
                .isEqualTo("the request body exceeds 1048576 bytes");
    }

    @Test
    void body_announcedOverTheLimit_refusedWith413BeforeAnyIsSent() throws Exception {
        SSLSocket socket = open();
        send(socket, "POST /mutate/pods HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                + "Content-Length: " + 100 * MIB + "\r\nConnection: close\r\n\r\n");

        // not a 408 after the 500 ms request deadline: the answer does not wait for the body
        assertThat(new String(socket.getInputStream().readAllBytes(), StandardCharsets.UTF_8))
                .startsWith("HTTP/1.1 413").contains("the request body exceeds 1048576 bytes");
    }

    @Test
    void largeBodies_pastTheBudget_refusedUnreadWith503_smallReviewsStillAnswered() throws Exception {
        serve(certificate, limits(Duration.ofSeconds(30), 3 * MIB + MIB / 2)); // three large bodies and change
        byte[] large = largeReview();
        List<SSLSocket> senders = new ArrayList<>();
        for (int i = 0; i < 6; i++) {
            SSLSocket socket = open();
            senders.add(socket);
            send(socket, "POST /mutate/pods HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                    + "Content-Length: " + large.length + "\r\n\r\n");
            socket.getOutputStream().write(large, 0, 1000);
            socket.getOutputStream().flush();
        }
        awaitHeld(3L * large.length);
        // the other three are refused at their headers; until they are, a finished body's share could admit one
        awaitRefusedUnread(3);

        HttpResponse<String> small = post("/mutate/pods", String.format(REVIEW, pod(3)));
        assertThat(small.statusCode()).isEqualTo(200);
        assertThat(responseOf(small).get("allowed").getAsBoolean()).isTrue();

        List<String> answers = new ArrayList<>();
        for (SSLSocket socket : senders) {
            socket.getOutputStream().write(large, 1000, large.length - 1000);
            socket.getOutputStream().flush();
        }
        for (SSLSocket socket : senders) {
            answers.add(readResponse(socket));
        }
        assertThat(answers).filteredOn(answer -> answer.startsWith("HTTP/1.1 200")).hasSize(3);
        assertThat(answers).filteredOn(answer -> answer.startsWith("HTTP/1.1 503")).hasSize(3)
                .allSatisfy(answer -> assertThat(answer)
                        .contains("request bodies fill the webhook's budget of 3670016 bytes"));
        awaitHeld(0);
    }

    @Test
    void slowBody_holdsItsShareOfTheBudget_untilIts408AndNoLonger() throws Exception {
        serve(certificate, limits(Duration.ofSeconds(3), MIB + MIB / 2));
        byte[] large = largeReview();
        SSLSocket slow = open();
        send(slow, "POST /mutate/pods HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                + "Content-Length: " + large.length + "\r\n\r\n{");
        awaitHeld(large.length);

        HttpResponse<String> refused = post("/mutate/pods", new String(large, StandardCharsets.UTF_8));
        assertThat(refused.statusCode()).isEqualTo(503);
        assertThat(responseOf(refused).getAsJsonObject("status").get("message").getAsString())
                .startsWith("request bodies fill the webhook's budget of 1572864 bytes").endsWith("was refused unread");

        assertThat(new String(slow.getInputStream().readAllBytes(), StandardCharsets.UTF_8)).startsWith("HTTP/1.1 408");
        awaitHeld(0);
        assertThat(post("/mutate/pods", new String(large, StandardCharsets.UTF_8)).statusCode()).isEqualTo(200);
    }

    @Test
    void slowSenders_fromOneClient_holdOnlyItsShare_reviewsFromOtherClientsAnswered() throws Exception {
        byte[] large = largeReview();
        // five large bodies fill the budget; one client may hold a quarter of it, one large body
        serve(certificate, limits(Duration.ofSeconds(30), 5L * large.length, 5L * large.length / 4, 0, Duration.ZERO));
        List<String> refused = new ArrayList<>();
        for (int i = 0; i < 5; i++) {
            SSLSocket socket = open("127.0.0.2", null);
            send(socket, "POST /mutate/pods HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                    + "Content-Length: " + large.length + "\r\n\r\n{");
            if (i == 0) {
                awaitHeld(large.length);
            } else {
                refused.add(readResponse(socket));
            }
        }

        HttpResponse<String> review = post("/mutate/pods", String.format(REVIEW, pod(3)));

        assertThat(review.statusCode()).isEqualTo(200);
        assertThat(responseOf(review).get("allowed").getAsBoolean()).isTrue();
        assertThat(refused).hasSize(4).allSatisfy(answer -> assertThat(answer).startsWith("HTTP/1.1 503")
                .contains("request bodies from address 127.0.0.2 fill its share of the webhook's budget, "
                        + 5L * large.length / 4 + " bytes (" + large.length + " held)"));
    }

    @Test
    void slowSenders_withACertificateEach_shareByCertificateNotAddress() throws Exception {
        TestCertificates.Authority ca = TestCertificates.authority(dir.resolve("client-ca"), "webhook-clients");
        TestCertificates.Pair attacker = TestCertificates.client(dir.resolve("attacker"), "system:node:node-a", ca);
        TestCertificates.Pair apiserver = TestCertificates.client(dir.resolve("apiserver"), "kube-apiserver", ca);
        byte[] large = largeReview();
        long share = large.length + MIB / 4; // one large body and what its parse keeps
        serve(ServingCertificate.load(pair.cert(), pair.key(), ca.cert()),
                limits(Duration.ofSeconds(30), 3 * share, share, 0, Duration.ZERO));
        SSLSocket holding = open("127.0.0.1", attacker);
        send(holding, "POST /mutate/pods HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                + "Content-Length: " + large.length + "\r\n\r\n{");
        awaitHeld(large.length);
        SSLSocket second = open("127.0.0.1", attacker);
        send(second, "POST /mutate/pods HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                + "Content-Length: " + large.length + "\r\n\r\n{");

        assertThat(readResponse(second)).startsWith("HTTP/1.1 503")
                .contains("request bodies from certificate CN=system:node:node-a fill its share");
        HttpResponse<String> review = post(client(apiserver), "/mutate/pods", new String(large, StandardCharsets.UTF_8));
        assertThat(review.statusCode()).isEqualTo(200);
        assertThat(responseOf(review).get("allowed").getAsBoolean()).isTrue();
    }

    @Test
    void slowBody_behindItsPace_cutWith408_itsClaimGivenBack_longBeforeTheRequestDeadline() throws Exception {
        byte[] large = largeReview();
        serve(certificate, limits(Duration.ofSeconds(60), 4 * MIB, 4 * MIB, 64 * 1024, Duration.ofMillis(200)));
        SSLSocket slow = open();
        slow.setSoTimeout(15_000); // a quarter of the request deadline: the 408 must not wait for it
        send(slow, "POST /mutate/pods HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                + "Content-Length: " + large.length + "\r\n\r\n{\"apiVersion\":");

        String answer = new String(slow.getInputStream().readAllBytes(), StandardCharsets.UTF_8);

        assertThat(answer).startsWith("HTTP/1.1 408").contains("the request body arrived too slowly: 14 of "
                + large.length + " bytes in ").contains("after its first 200ms a body must arrive at 65536 bytes/s");
        awaitHeld(0);
        assertThat(registry.get("satoken_webhook_requests_total").tag("path", "other").tag("result", "timeout")
                .counter().count()).isEqualTo(1);
    }

    @Test
    void body_sentAtOnce_keepsItsPace_andIsReviewed() throws Exception {
        serve(certificate, limits(Duration.ofSeconds(30), 4 * MIB, 2 * MIB, 64 * 1024, Duration.ofMillis(100)));

        HttpResponse<String> review = post("/mutate/pods", new String(largeReview(), StandardCharsets.UTF_8));

        assertThat(review.statusCode()).isEqualTo(200);
        assertThat(responseOf(review).get("allowed").getAsBoolean()).isTrue();
        awaitHeld(0);
    }

    @Test
    void parse_keepsMoreThanTheClientsShareAllows_answered503_notHeld() throws Exception {
        byte[] containers = ReviewMemory.containers(1000); // 28 KB that keep about 290 KB once read
        serve(certificate, limits(Duration.ofSeconds(30), 4 * MIB, 128 * 1024, 0, Duration.ZERO));

        HttpResponse<String> review = post("/mutate/pods", new String(containers, StandardCharsets.UTF_8));

        assertThat(review.statusCode()).isEqualTo(200);
        assertThat(responseOf(review).get("allowed").getAsBoolean()).isFalse();
        assertThat(responseOf(review).getAsJsonObject("status").get("code").getAsInt()).isEqualTo(503);
        assertThat(responseOf(review).getAsJsonObject("status").get("message").getAsString())
                .startsWith("the webhook's memory budget for reviews is full");
        awaitHeld(0);
    }

    @Test
    void body_trickledByteByByte_gets408AtTheRequestDeadlineAnyway() throws Exception {
        SSLSocket socket = open();
        send(socket, "POST /mutate/pods HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                + "Content-Length: 100000\r\n\r\n");
        trickle.scheduleAtFixedRate(() -> {
            try {
                send(socket, " ");
            } catch (IOException e) {
                trickle.shutdown(); // closed by the server: what the test waits for
            }
        }, 20, 20, TimeUnit.MILLISECONDS);

        assertThat(new String(socket.getInputStream().readAllBytes(), StandardCharsets.UTF_8))
                .startsWith("HTTP/1.1 408").contains("did not arrive within");
    }

    @Test
    void clientCa_clientWithoutACertificate_refusedInTheHandshake() throws Exception {
        TestCertificates.Authority ca = TestCertificates.authority(dir.resolve("client-ca"), "apiserver-clients");
        serve(ServingCertificate.load(pair.cert(), pair.key(), ca.cert()), limits(Duration.ofMillis(500), 4 * MIB));

        assertThatThrownBy(() -> post(client(null), "/mutate/pods", String.format(REVIEW, pod(1))))
                .isInstanceOf(IOException.class);
        // every series is there from the start, at 0: none counted a request
        assertThat(registry.find("satoken_webhook_requests_total").counters())
                .allSatisfy(c -> assertThat(c.count()).isZero());
    }

    @Test
    void clientCa_certificateFromAnotherCa_refusedInTheHandshake() throws Exception {
        TestCertificates.Authority ca = TestCertificates.authority(dir.resolve("client-ca"), "apiserver-clients");
        TestCertificates.Authority other = TestCertificates.authority(dir.resolve("other-ca"), "someone-else");
        TestCertificates.Pair forged = TestCertificates.client(dir.resolve("forged"), "kube-apiserver", other);
        serve(ServingCertificate.load(pair.cert(), pair.key(), ca.cert()), limits(Duration.ofMillis(500), 4 * MIB));

        assertThatThrownBy(() -> post(client(forged), "/mutate/pods", String.format(REVIEW, pod(1))))
                .isInstanceOf(IOException.class);
    }

    @Test
    void clientCa_certificateItSigned_isServed() throws Exception {
        TestCertificates.Authority ca = TestCertificates.authority(dir.resolve("client-ca"), "apiserver-clients");
        TestCertificates.Pair apiserver = TestCertificates.client(dir.resolve("apiserver"), "kube-apiserver", ca);
        serve(ServingCertificate.load(pair.cert(), pair.key(), ca.cert()), limits(Duration.ofMillis(500), 4 * MIB));

        HttpResponse<String> response = post(client(apiserver), "/mutate/pods", String.format(REVIEW, pod(1)));

        assertThat(response.statusCode()).isEqualTo(200);
        assertThat(responseOf(response).get("allowed").getAsBoolean()).isTrue();
    }

    @Test
    void clientCa_rotated_requiredOfNewConnectionsWithoutARestart() throws Exception {
        Path caDir = dir.resolve("client-ca");
        TestCertificates.Authority first = TestCertificates.authority(caDir, "clients-1");
        TestCertificates.Pair oldClient = TestCertificates.client(dir.resolve("old"), "kube-apiserver", first);
        ServingCertificate served = ServingCertificate.load(pair.cert(), pair.key(), first.cert());
        serve(served, limits(Duration.ofMillis(500), 4 * MIB));
        TestCertificates.Authority second = TestCertificates.authority(caDir, "clients-2");
        TestCertificates.Pair newClient = TestCertificates.client(dir.resolve("new"), "kube-apiserver", second);

        assertThat(served.reload()).isTrue();

        assertThat(post(client(newClient), "/mutate/pods", String.format(REVIEW, pod(1))).statusCode()).isEqualTo(200);
        assertThatThrownBy(() -> post(client(oldClient), "/mutate/pods", String.format(REVIEW, pod(1))))
                .isInstanceOf(IOException.class);
    }

    @Test
    void clientCaFile_withoutACertificate_refusedNamingTheFlag() throws Exception {
        Path empty = Files.writeString(dir.resolve("empty-ca.pem"), "not a certificate\n");

        assertThatThrownBy(() -> ServingCertificate.load(pair.cert(), pair.key(), empty))
                .isInstanceOf(IllegalArgumentException.class).hasMessageStartingWith("--client-ca-file: ");
        assertThatThrownBy(() -> ServingCertificate.load(pair.cert(), pair.key(), dir.resolve("absent.pem")))
                .isInstanceOf(IllegalArgumentException.class).hasMessageEndingWith(": not found").hasMessageStartingWith("--client-ca-file ");
    }

    @Test
    void request_wrongPathMethodOrContentType_refused() throws Exception {
        HttpClient client = client();
        URI base = URI.create("https://127.0.0.1:" + server.address().getPort());
        HttpResponse<String> unknown = client.send(HttpRequest.newBuilder(base.resolve("/mutate/secrets"))
                .POST(HttpRequest.BodyPublishers.ofString("{}")).header("Content-Type", "application/json").build(),
                HttpResponse.BodyHandlers.ofString());
        HttpResponse<String> get = client.send(HttpRequest.newBuilder(base.resolve("/mutate/pods")).GET().build(),
                HttpResponse.BodyHandlers.ofString());
        HttpResponse<String> yaml = client.send(HttpRequest.newBuilder(base.resolve("/mutate/pods"))
                .POST(HttpRequest.BodyPublishers.ofString("a: b")).header("Content-Type", "application/yaml").build(),
                HttpResponse.BodyHandlers.ofString());

        assertThat(unknown.statusCode()).isEqualTo(404);
        assertThat(unknown.body()).contains("no webhook at /mutate/secrets");
        assertThat(get.statusCode()).isEqualTo(405);
        assertThat(yaml.statusCode()).isEqualTo(415);
        assertThat(responseOf(yaml).getAsJsonObject("status").get("message").getAsString())
                .isEqualTo("Content-Type must be application/json, got \"application/yaml\"");
    }

    @Test
    void review_notDecidedInTime_deniedAsUnavailable() throws Exception {
        HttpResponse<String> response = post("/stuck", String.format(REVIEW, pod(1)));

        assertThat(response.statusCode()).isEqualTo(200);
        JsonObject answer = responseOf(response);
        assertThat(answer.get("uid").getAsString()).isEqualTo("u-1");
        assertThat(answer.get("allowed").getAsBoolean()).isFalse();
        assertThat(answer.getAsJsonObject("status").get("code").getAsInt()).isEqualTo(503);
        assertThat(answer.getAsJsonObject("status").get("message").getAsString())
                .isEqualTo("the webhook did not decide within 300ms");
    }

    @Test
    void request_notArrivedInTime_gets408AndTheConnectionCloses() throws Exception {
        try (SSLSocket socket = socket("TLSv1.3")) {
            socket.setSoTimeout(10_000);
            OutputStream out = socket.getOutputStream();
            out.write(("POST /mutate/pods HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                    + "Content-Length: 100\r\n\r\n{").getBytes(StandardCharsets.US_ASCII));
            out.flush();
            String answer = new String(socket.getInputStream().readAllBytes(), StandardCharsets.UTF_8);

            assertThat(answer).startsWith("HTTP/1.1 408").contains("did not arrive within");
        }
    }

    @Test
    void headers_notArrivedInTime_get408Too() throws Exception {
        try (SSLSocket socket = socket("TLSv1.3")) {
            socket.setSoTimeout(10_000);
            OutputStream out = socket.getOutputStream();
            out.write("POST /mutate/pods HTTP/1.1\r\nHost: x\r\n".getBytes(StandardCharsets.US_ASCII));
            out.flush();
            String answer = new String(socket.getInputStream().readAllBytes(), StandardCharsets.UTF_8);

            assertThat(answer).startsWith("HTTP/1.1 408");
        }
    }

    @Test
    void keepAlive_oneConnection_servesManyRequests() throws Exception {
        HttpClient client = client();
        URI uri = URI.create("https://127.0.0.1:" + server.address().getPort() + "/mutate/pods");
        for (int i = 0; i < 20; i++) {
            HttpResponse<String> response = client.send(HttpRequest.newBuilder(uri)
                    .POST(HttpRequest.BodyPublishers.ofString(String.format(REVIEW, pod(3))))
                    .header("Content-Type", "application/json").build(), HttpResponse.BodyHandlers.ofString());
            assertThat(response.statusCode()).isEqualTo(200);
        }
    }

    @Test
    void tls_v12AndV13_areServed() throws Exception {
        for (String protocol : new String[] {"TLSv1.2", "TLSv1.3"}) {
            try (SSLSocket socket = socket(protocol)) {
                socket.startHandshake();
                assertThat(socket.getSession().getProtocol()).isEqualTo(protocol);
            }
        }
    }

    @Test
    void certificate_rotated_servedToNewConnectionsWithoutARestart() throws Exception {
        assertThat(peerSubject()).isEqualTo("CN=first");
        TestCertificates.Pair second = TestCertificates.write(dir.resolve("tls"), "second");

        assertThat(certificate.reload()).isTrue();
        assertThat(certificate.reload()).isFalse(); // unchanged files: nothing to do

        assertThat(peerSubject()).isEqualTo("CN=second");
        assertThat(second.cert()).isEqualTo(pair.cert());
    }

    @Test
    void certificate_halfRotatedPair_skippedAndTheOldOneKept() throws Exception {
        Path other = dir.resolve("other");
        TestCertificates.Pair unrelated = TestCertificates.write(other, "unrelated");
        Files.copy(unrelated.cert(), pair.cert(), java.nio.file.StandardCopyOption.REPLACE_EXISTING);

        assertThat(certificate.reload()).isFalse();

        assertThat(peerSubject()).isEqualTo("CN=first");
    }

    // --- helpers ---------------------------------------------------------------------------------

    /** An AdmissionReview of a pod with a 1,000,000-byte annotation: under 1 MiB, three fill 3 MiB. */
    private static byte[] largeReview() {
        return String.format(REVIEW, "{\"kind\":\"Pod\",\"metadata\":{\"name\":\"p\",\"annotations\":{\"x\":\""
                + "a".repeat(1_000_000) + "\"}},\"spec\":{\"containers\":[{\"name\":\"c\",\"image\":\"i\"}]}}")
                .getBytes(StandardCharsets.UTF_8);
    }

    /** Waits until the server holds exactly {@code bytes} of bodies; the claims are made on its network threads. */
    /** Waits until {@code count} requests were refused before their body was read (503, counted as "other"). */
    private void awaitRefusedUnread(int count) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
        while (refusedUnread() < count && System.nanoTime() < deadline) {
            Thread.sleep(5);
        }
        assertThat(refusedUnread()).isEqualTo(count);
    }

    private double refusedUnread() {
        var counter = registry.find("satoken_webhook_requests_total").tag("path", "other").tag("result", "overloaded")
                .counter();
        return counter == null ? 0 : counter.count();
    }

    private void awaitHeld(long bytes) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
        while (server.bodyBytesHeld() != bytes && System.nanoTime() < deadline) {
            Thread.sleep(5);
        }
        assertThat(server.bodyBytesHeld()).isEqualTo(bytes);
    }

    private SSLSocket open() throws Exception {
        SSLSocket socket = socket("TLSv1.3");
        sockets.add(socket);
        socket.setSoTimeout(20_000);
        return socket;
    }

    /**
     * A connection from {@code localAddress} (any of 127.0.0.0/8 on Linux: one client per address), presenting
     * {@code certificate} when it is not null.
     */
    private SSLSocket open(String localAddress, TestCertificates.Pair certificate) throws Exception {
        SSLSocket socket = (SSLSocket) pair.trustingIt(certificate == null ? null : keys(certificate)).getSocketFactory()
                .createSocket(java.net.InetAddress.getByName("127.0.0.1"), server.address().getPort(),
                        java.net.InetAddress.getByName(localAddress), 0);
        sockets.add(socket);
        socket.setSoTimeout(20_000);
        return socket;
    }

    private static void send(SSLSocket socket, String text) throws IOException {
        OutputStream out = socket.getOutputStream();
        out.write(text.getBytes(StandardCharsets.US_ASCII));
        out.flush();
    }

    /** One response off a kept-alive connection: its head, then as much body as Content-Length says. */
    private static String readResponse(SSLSocket socket) throws IOException {
        InputStream in = socket.getInputStream();
        StringBuilder head = new StringBuilder();
        while (!head.toString().endsWith("\r\n\r\n")) {
            int c = in.read();
            if (c < 0) {
                break;
            }
            head.append((char) c);
        }
        int length = 0;
        for (String line : head.toString().split("\r\n")) {
            if (line.toLowerCase(java.util.Locale.ROOT).startsWith("content-length:")) {
                length = Integer.parseInt(line.substring("content-length:".length()).trim());
            }
        }
        return head + new String(in.readNBytes(length), StandardCharsets.UTF_8);
    }

    private HttpResponse<String> post(String path, String body) throws Exception {
        return post(client(), path, body);
    }

    private HttpResponse<String> post(HttpClient client, String path, String body) throws Exception {
        return client.send(HttpRequest.newBuilder(URI.create("https://127.0.0.1:" + server.address().getPort() + path))
                        .POST(HttpRequest.BodyPublishers.ofString(body)).header("Content-Type", "application/json")
                        .timeout(Duration.ofSeconds(30)).build(),
                HttpResponse.BodyHandlers.ofString());
    }

    private static JsonObject responseOf(HttpResponse<String> response) {
        return JsonParser.parseString(response.body()).getAsJsonObject().getAsJsonObject("response");
    }

    private HttpClient client() throws Exception {
        return HttpClient.newBuilder().sslContext(pair.trustingIt()).version(HttpClient.Version.HTTP_1_1).build();
    }

    /** A client presenting {@code certificate} ({@link #keys}), or no certificate when it is null. */
    private HttpClient client(TestCertificates.Pair certificate) throws Exception {
        KeyManager[] keys = certificate == null ? null : keys(certificate);
        return HttpClient.newBuilder().sslContext(pair.trustingIt(keys)).version(HttpClient.Version.HTTP_1_1).build();
    }

    /**
     * Keys presenting {@code certificate} whatever CAs the server names (the JDK's own key manager would quietly send
     * none when the issuer is not among them).
     */
    private static KeyManager[] keys(TestCertificates.Pair certificate) throws Exception {
        PrivateKey key;
        try (PEMParser parser = new PEMParser(Files.newBufferedReader(certificate.key()))) {
            key = new JcaPEMKeyConverter().getPrivateKey((PrivateKeyInfo) parser.readObject());
        }
        X509Certificate[] chain = {certificate.certificate()};
        return new KeyManager[] {new X509ExtendedKeyManager() {
            @Override
            public String chooseEngineClientAlias(String[] types, Principal[] issuers, SSLEngine engine) {
                return "client";
            }

            @Override
            public String chooseClientAlias(String[] types, Principal[] issuers, Socket socket) {
                return "client";
            }

            @Override
            public X509Certificate[] getCertificateChain(String alias) {
                return chain;
            }

            @Override
            public PrivateKey getPrivateKey(String alias) {
                return key;
            }

            @Override
            public String[] getClientAliases(String type, Principal[] issuers) {
                return new String[] {"client"};
            }

            @Override
            public String[] getServerAliases(String type, Principal[] issuers) {
                return null;
            }

            @Override
            public String chooseServerAlias(String type, Principal[] issuers, Socket socket) {
                return null;
            }
        }};
    }

    private SSLSocket socket(String protocol) throws Exception {
        SSLSocket socket = (SSLSocket) pair.trustingIt().getSocketFactory()
                .createSocket("127.0.0.1", server.address().getPort());
        socket.setEnabledProtocols(new String[] {protocol});
        return socket;
    }

    private String peerSubject() throws Exception {
        SSLContext context = SSLContext.getInstance("TLS");
        context.init(null, new javax.net.ssl.TrustManager[] {new javax.net.ssl.X509TrustManager() {
            public void checkClientTrusted(X509Certificate[] chain, String type) {
            }

            public void checkServerTrusted(X509Certificate[] chain, String type) {
            }

            public X509Certificate[] getAcceptedIssuers() {
                return new X509Certificate[0];
            }
        }}, null);
        try (SSLSocket socket = (SSLSocket) context.getSocketFactory().createSocket("127.0.0.1",
                server.address().getPort())) {
            socket.startHandshake();
            return ((X509Certificate) socket.getSession().getPeerCertificates()[0]).getSubjectX500Principal().getName();
        }
    }

}
