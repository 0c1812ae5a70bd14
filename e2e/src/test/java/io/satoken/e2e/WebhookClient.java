package io.satoken.e2e;

import com.google.gson.JsonObject;
import com.google.gson.JsonParser;
import io.satoken.controlplane.webhook.TestCertificates;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.security.GeneralSecurityException;
import java.security.KeyStore;
import java.security.PrivateKey;
import java.security.cert.Certificate;
import java.security.cert.CertificateFactory;
import java.time.Duration;
import javax.net.ssl.KeyManager;
import javax.net.ssl.KeyManagerFactory;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLSocket;
import javax.net.ssl.TrustManagerFactory;
import org.bouncycastle.asn1.pkcs.PrivateKeyInfo;
import org.bouncycastle.openssl.PEMParser;
import org.bouncycastle.openssl.jcajce.JcaPEMKeyConverter;

/**
 * Talks to the control plane's admission webhook the way kube-apiserver does: HTTPS, trusting only the
 * serving certificate's PEM (its caBundle), HTTP/1.1. Also sends what the API server never would: other
 * methods, content types and paths, a body cut short, plain HTTP on the TLS port.
 */
final class WebhookClient {

    /** An answer: the HTTP status, and the AdmissionReview's {@code response} when the body is one. */
    record Answer(int status, String body, JsonObject response) {
        boolean allowed() {
            return response != null && response.get("allowed").getAsBoolean();
        }

        int code() {
            return response == null || !response.has("status") ? 0 : response.getAsJsonObject("status").get("code").getAsInt();
        }

        String message() {
            return response == null || !response.has("status") ? ""
                    : response.getAsJsonObject("status").get("message").getAsString();
        }

        String uid() {
            return response == null ? null : response.get("uid").getAsString();
        }
    }

    private final int port;
    private final SSLContext tls;
    private final HttpClient http;

    WebhookClient(int port, String caPem) throws GeneralSecurityException, IOException {
        this(port, caPem, null);
    }

    /**
     * A client presenting {@code certificate} (null: none), as the API server presents its own to a webhook that
     * requires one ({@code --client-ca-file}).
     */
    WebhookClient(int port, String caPem, TestCertificates.Pair certificate) throws GeneralSecurityException, IOException {
        this.port = port;
        KeyStore store = KeyStore.getInstance(KeyStore.getDefaultType());
        store.load(null, null);
        store.setCertificateEntry("ca", CertificateFactory.getInstance("X.509")
                .generateCertificate(new ByteArrayInputStream(caPem.getBytes(StandardCharsets.US_ASCII))));
        TrustManagerFactory trust = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
        trust.init(store);
        this.tls = SSLContext.getInstance("TLS");
        this.tls.init(certificate == null ? null : keys(certificate), trust.getTrustManagers(), null);
        this.http = HttpClient.newBuilder().sslContext(tls).version(HttpClient.Version.HTTP_1_1)
                .connectTimeout(Duration.ofSeconds(5)).build();
    }

    /** POSTs {@code body} as {@code application/json}. */
    Answer post(String path, String body) throws IOException, InterruptedException {
        return send(path, "POST", body, "application/json");
    }

    /** Any method, body (null: none) and content type (null: no header). */
    Answer send(String path, String method, String body, String contentType) throws IOException, InterruptedException {
        HttpRequest.Builder b = HttpRequest.newBuilder(URI.create("https://127.0.0.1:" + port + path))
                .timeout(Duration.ofSeconds(30))
                .method(method, body == null ? HttpRequest.BodyPublishers.noBody()
                        : HttpRequest.BodyPublishers.ofString(body, StandardCharsets.UTF_8));
        if (contentType != null) {
            b.header("Content-Type", contentType);
        }
        HttpResponse<String> r = http.send(b.build(), HttpResponse.BodyHandlers.ofString());
        return new Answer(r.statusCode(), r.body(), reviewResponse(r.body()));
    }

    /**
     * Sends the start of a request over TLS and no more, then reads until the server closes: what a client
     * that stalls gets. Returns the raw HTTP answer.
     */
    String stall(String partialRequest) throws IOException {
        try (SSLSocket socket = (SSLSocket) tls.getSocketFactory().createSocket("127.0.0.1", port)) {
            socket.setSoTimeout(30_000);
            OutputStream out = socket.getOutputStream();
            out.write(partialRequest.getBytes(StandardCharsets.US_ASCII));
            out.flush();
            return new String(socket.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        }
    }

    /** Sends a plain-HTTP request to the TLS port; returns what came back before the server closed. */
    String plainHttp(String request) throws IOException {
        try (Socket socket = new Socket("127.0.0.1", port)) {
            socket.setSoTimeout(15_000);
            socket.getOutputStream().write(request.getBytes(StandardCharsets.US_ASCII));
            socket.getOutputStream().flush();
            return new String(socket.getInputStream().readAllBytes(), StandardCharsets.ISO_8859_1);
        } catch (java.net.SocketException reset) {
            return ""; // a reset is a refusal too
        }
    }

    /**
     * Opens a TLS connection and sends {@code head} (a request's headers and the start of its body), leaving the
     * connection open for the caller to send more, slowly or never.
     */
    SSLSocket open(String head) throws IOException {
        SSLSocket socket = (SSLSocket) tls.getSocketFactory().createSocket("127.0.0.1", port);
        socket.setSoTimeout(30_000);
        socket.getOutputStream().write(head.getBytes(StandardCharsets.US_ASCII));
        socket.getOutputStream().flush();
        return socket;
    }

    /** Key managers presenting {@code certificate}, from its PEM files. */
    private static KeyManager[] keys(TestCertificates.Pair certificate) throws GeneralSecurityException, IOException {
        PrivateKey key;
        try (PEMParser parser = new PEMParser(Files.newBufferedReader(certificate.key()))) {
            key = new JcaPEMKeyConverter().getPrivateKey((PrivateKeyInfo) parser.readObject());
        }
        KeyStore store = KeyStore.getInstance(KeyStore.getDefaultType());
        store.load(null, null);
        char[] password = "client".toCharArray();
        store.setKeyEntry("client", key, password, new Certificate[] {certificate.certificate()});
        KeyManagerFactory factory = KeyManagerFactory.getInstance(KeyManagerFactory.getDefaultAlgorithm());
        factory.init(store, password);
        return factory.getKeyManagers();
    }

    private static JsonObject reviewResponse(String body) {
        try {
            JsonObject review = JsonParser.parseString(body).getAsJsonObject();
            return review.has("response") ? review.getAsJsonObject("response") : null;
        } catch (RuntimeException notAReview) {
            return null;
        }
    }
}
