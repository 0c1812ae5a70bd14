package io.satoken.common.health;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.net.SocketTimeoutException;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/** The client against hand-written servers: what it sends, and how it fails. */
@Timeout(value = 15, unit = TimeUnit.SECONDS)
class UnixSocketClientTest {
    private static final Duration TIMEOUT = Duration.ofSeconds(5);

    @TempDir
    Path dir;

    @Test
    void get_noSocketFile_failsNamingThePath() {
        Path socket = dir.resolve("missing.sock");

        assertThatThrownBy(() -> UnixSocketClient.get(socket, "/status", TIMEOUT)).isInstanceOf(IOException.class)
                .hasMessageStartingWith(socket + ": cannot connect: ");
    }

    @Test
    void get_regularFileAtThePath_failsNamingThePath() throws IOException {
        Path socket = Files.writeString(dir.resolve("agent.sock"), "not a socket");

        assertThatThrownBy(() -> UnixSocketClient.get(socket, "/status", TIMEOUT)).isInstanceOf(IOException.class)
                .hasMessageStartingWith(socket + ": cannot connect: ");
    }

    @Test
    void get_serverNeverAnswers_timesOutNamingThePath() throws IOException {
        Path socket = dir.resolve("agent.sock");
        try (ServerSocketChannel silent = ServerSocketChannel.open(StandardProtocolFamily.UNIX)) {
            silent.bind(UnixDomainSocketAddress.of(socket)); // the backlog takes the connection; nobody reads it

            assertThatThrownBy(() -> UnixSocketClient.get(socket, "/status", Duration.ofMillis(200)))
                    .isInstanceOf(SocketTimeoutException.class)
                    .hasMessage(socket + ": waited 200ms for the whole answer");
        }
    }

    @Test
    void get_sendsOneHttp11Get_andReadsTheBodyByContentLength() throws Exception {
        String answer = "HTTP/1.1 503 Service Unavailable\r\nContent-Type: text/plain\r\ncontent-length: 5\r\n"
                + "Connection: close\r\n\r\nnot yet, and more than the length";

        Served served = serveOnce(answer);

        assertThat(served.reply()).isEqualTo(new UnixSocketClient.Reply(503, "not y"));
        assertThat(served.request())
                .isEqualTo("GET /status?x=1 HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n");
    }

    @Test
    void get_answerCutShort_fails() {
        assertThatThrownBy(() -> serveOnce("HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nshort"))
                .isInstanceOf(IOException.class).hasMessageEndingWith(": the answer was cut short: 5 of 10 body bytes");
    }

    @Test
    void get_malformedStatusLine_fails() {
        assertThatThrownBy(() -> serveOnce("SSH-2.0-OpenSSH\r\n\r\n"))
                .isInstanceOf(IOException.class).hasMessageEndingWith(": malformed status line \"SSH-2.0-OpenSSH\"");
    }

    @Test
    void get_pathNotStartingWithSlash_isRefusedBeforeConnecting() {
        assertThatThrownBy(() -> UnixSocketClient.get(dir.resolve("agent.sock"), "status", TIMEOUT))
                .isInstanceOf(IllegalArgumentException.class);
    }

    private record Served(String request, UnixSocketClient.Reply reply) {}

    /** Asks a server that reads one request head, writes {@code answer} and closes. */
    private Served serveOnce(String answer) throws Exception {
        Path socket = dir.resolve("agent.sock");
        try (ServerSocketChannel listener = ServerSocketChannel.open(StandardProtocolFamily.UNIX)) {
            listener.bind(UnixDomainSocketAddress.of(socket));
            CompletableFuture<String> request = CompletableFuture.supplyAsync(() -> {
                try (SocketChannel channel = listener.accept()) {
                    ByteBuffer head = ByteBuffer.allocate(4096);
                    while (!headOf(head).endsWith("\r\n\r\n") && channel.read(head) >= 0) {
                        // until the head is whole
                    }
                    channel.write(ByteBuffer.wrap(answer.getBytes(StandardCharsets.ISO_8859_1)));
                    return headOf(head);
                } catch (IOException e) {
                    throw new IllegalStateException(e);
                }
            });
            try {
                UnixSocketClient.Reply reply = UnixSocketClient.get(socket, "/status?x=1", TIMEOUT);
                return new Served(request.get(), reply);
            } finally {
                request.cancel(true);
            }
        }
    }

    private static String headOf(ByteBuffer head) {
        return new String(head.array(), 0, head.position(), StandardCharsets.ISO_8859_1);
    }
}
