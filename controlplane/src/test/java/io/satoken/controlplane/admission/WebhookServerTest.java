package io.satoken.controlplane.admission;

import static io.satoken.controlplane.admission.AdmissionFixtures.account;
import static org.assertj.core.api.Assertions.assertThat;

import com.google.gson.JsonObject;
import com.google.gson.JsonParser;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.satoken.controlplane.admission.ServiceAccountAdmission.TokenVolume;
import java.io.ByteArrayInputStream;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyStore;
import java.security.cert.CertificateFactory;
import java.security.cert.X509Certificate;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLSocket;
import javax.net.ssl.TrustManagerFactory;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The server on loopback over real TLS: what the API server sees for good, malformed, oversized, slow and
 * undecided requests, and certificate rotation without a restart. Timeouts are set short; the tests wait
 * on the server's answers, never sleep.
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

    @BeforeEach
    void start() throws Exception {
        pair = TestCertificates.write(dir.resolve("tls"), "first");
        certificate = ServingCertificate.load(pair.cert(), pair.key());
        PodMutation pods = ServiceAccountAdmissionTest.mutation(
                new AdmissionFixtures.Accounts().cache(account("default")), TokenVolume.PROJECTED, false);
        Admission stuck = request -> {
            release.await();
            return Verdict.allow();
        };
        server = new WebhookServer(new InetSocketAddress("127.0.0.1", 0), certificate,
                Map.of("/mutate/pods", pods, "/stuck", stuck),
                new WebhookServer.Limits(1024 * 1024, Duration.ofMillis(500), Duration.ofMillis(300),
                        Duration.ofSeconds(30), 2, 4),
                new WebhookMetrics(registry, certificate));
        server.start();
    }

    @AfterEach
    void stop() {
        release.countDown();
        server.close();
    }

    @Test
    void pod_review_is_answered_with_a_json_patch_and_the_requests_uid() throws Exception {
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
    void pod_with_a_thousand_containers_is_answered() throws Exception {
        HttpResponse<String> response = post("/mutate/pods", String.format(REVIEW, pod(1000)));

        JsonObject answer = responseOf(response);
        assertThat(answer.get("allowed").getAsBoolean()).isTrue();
        String patch = new String(java.util.Base64.getDecoder().decode(answer.get("patch").getAsString()),
                StandardCharsets.UTF_8);
        // serviceAccountName, one mount per container, the volume
        assertThat(JsonParser.parseString(patch).getAsJsonArray()).hasSize(1002);
    }

    @Test
    void not_json_is_a_denied_review_not_a_server_error() throws Exception {
        HttpResponse<String> response = post("/mutate/pods", "{\"apiVersion\": nope");

        assertThat(response.statusCode()).isEqualTo(200);
        JsonObject answer = responseOf(response);
        assertThat(answer.get("allowed").getAsBoolean()).isFalse();
        assertThat(answer.getAsJsonObject("status").get("code").getAsInt()).isEqualTo(400);
        assertThat(answer.getAsJsonObject("status").get("message").getAsString()).startsWith("AdmissionReview: not JSON");
        assertThat(response.body()).doesNotContain("Exception").doesNotContain("\tat ");
    }

    @Test
    void malformed_pod_names_the_field() throws Exception {
        HttpResponse<String> response = post("/mutate/pods", String.format(REVIEW,
                "{\"kind\":\"Pod\",\"spec\":{\"containers\":\"app\"}}"));

        JsonObject answer = responseOf(response);
        assertThat(answer.get("uid").getAsString()).isEqualTo("u-1");
        assertThat(answer.getAsJsonObject("status").get("message").getAsString())
                .isEqualTo("spec.containers: must be a list, got a string");
    }

    @Test
    void body_over_the_limit_is_refused_with_413_and_a_review() throws Exception {
        String huge = String.format(REVIEW, "{\"kind\":\"Pod\",\"metadata\":{\"annotations\":{\"x\":\""
                + "a".repeat(2 * 1024 * 1024) + "\"}}}");

        HttpResponse<String> response = post("/mutate/pods", huge);

        assertThat(response.statusCode()).isEqualTo(413);
        assertThat(responseOf(response).getAsJsonObject("status").get("message").getAsString())
                .isEqualTo("the request body exceeds 1048576 bytes");
    }

    @Test
    void wrong_path_method_and_content_type_are_refused() throws Exception {
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
    void review_that_does_not_decide_in_time_is_denied_as_unavailable() throws Exception {
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
    void request_that_does_not_arrive_in_time_gets_408_and_the_connection_closes() throws Exception {
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
    void headers_that_do_not_arrive_in_time_get_408_too() throws Exception {
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
    void keep_alive_connection_serves_many_requests() throws Exception {
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
    void tls_1_2_and_1_3_are_served() throws Exception {
        for (String protocol : new String[] {"TLSv1.2", "TLSv1.3"}) {
            try (SSLSocket socket = socket(protocol)) {
                socket.startHandshake();
                assertThat(socket.getSession().getProtocol()).isEqualTo(protocol);
            }
        }
    }

    @Test
    void rotated_certificate_is_served_to_new_connections_without_a_restart() throws Exception {
        assertThat(peerSubject()).isEqualTo("CN=first");
        TestCertificates.Pair second = TestCertificates.write(dir.resolve("tls"), "second");

        assertThat(certificate.reload()).isTrue();
        assertThat(certificate.reload()).isFalse(); // unchanged files: nothing to do

        assertThat(peerSubject()).isEqualTo("CN=second");
        assertThat(second.cert()).isEqualTo(pair.cert());
    }

    @Test
    void half_rotated_pair_is_skipped_and_the_old_one_kept() throws Exception {
        Path other = dir.resolve("other");
        TestCertificates.Pair unrelated = TestCertificates.write(other, "unrelated");
        Files.copy(unrelated.cert(), pair.cert(), java.nio.file.StandardCopyOption.REPLACE_EXISTING);

        assertThat(certificate.reload()).isFalse();

        assertThat(peerSubject()).isEqualTo("CN=first");
    }

    // --- helpers ---------------------------------------------------------------------------------

    static String pod(int containers) {
        StringBuilder list = new StringBuilder();
        for (int i = 0; i < containers; i++) {
            list.append(i == 0 ? "" : ",").append("{\"name\":\"c").append(i).append("\",\"image\":\"i\"}");
        }
        return "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"p\",\"namespace\":\"ns\"},"
                + "\"spec\":{\"containers\":[" + list + "]}}";
    }

    private HttpResponse<String> post(String path, String body) throws Exception {
        return client().send(HttpRequest.newBuilder(URI.create("https://127.0.0.1:" + server.address().getPort() + path))
                        .POST(HttpRequest.BodyPublishers.ofString(body)).header("Content-Type", "application/json")
                        .timeout(Duration.ofSeconds(30)).build(),
                HttpResponse.BodyHandlers.ofString());
    }

    private static JsonObject responseOf(HttpResponse<String> response) {
        return JsonParser.parseString(response.body()).getAsJsonObject().getAsJsonObject("response");
    }

    private HttpClient client() throws Exception {
        return HttpClient.newBuilder().sslContext(trusting()).version(HttpClient.Version.HTTP_1_1).build();
    }

    private SSLSocket socket(String protocol) throws Exception {
        SSLSocket socket = (SSLSocket) trusting().getSocketFactory().createSocket("127.0.0.1", server.address().getPort());
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

    /** Trusts the first certificate, as the API server trusts the caBundle. */
    private SSLContext trusting() throws Exception {
        KeyStore store = KeyStore.getInstance(KeyStore.getDefaultType());
        store.load(null, null);
        try (InputStream in = new ByteArrayInputStream(pair.pem().getBytes(StandardCharsets.US_ASCII))) {
            store.setCertificateEntry("ca", CertificateFactory.getInstance("X.509").generateCertificate(in));
        }
        TrustManagerFactory trust = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
        trust.init(store);
        SSLContext context = SSLContext.getInstance("TLS");
        context.init(null, trust.getTrustManagers(), null);
        return context;
    }
}
