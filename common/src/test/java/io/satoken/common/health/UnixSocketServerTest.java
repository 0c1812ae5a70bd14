package io.satoken.common.health;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

class UnixSocketServerTest {
    /** Generous for a loaded 2-core machine. */
    private static final Duration TIMEOUT = Duration.ofSeconds(5);

    @TempDir
    Path dir;
    private final List<AutoCloseable> open = new ArrayList<>();

    @AfterEach
    void closeAll() throws Exception {
        for (AutoCloseable closeable : open) {
            closeable.close();
        }
    }

    @Test
    void get_overTheSocket_answersWithTheHandlersBody() throws IOException {
        Path socket = start(dir.resolve("agent.sock")).socket();

        UnixSocketClient.Reply reply = UnixSocketClient.get(socket, "/status?verbose=1", TIMEOUT);

        assertThat(reply).isEqualTo(new UnixSocketClient.Reply(200, "{\"path\":\"/status\",\"note\":\"é\"}"));
    }

    @Test
    void get_handlerFails_answers500() throws IOException {
        UnixSocketServer server = open(new UnixSocketServer(dir.resolve("agent.sock"), path -> {
            throw new IllegalStateException("boom");
        }, "test-socket"));
        server.start();

        assertThat(UnixSocketClient.get(server.socket(), "/status", TIMEOUT).status()).isEqualTo(500);
    }

    @Test
    void post_isRefusedWith405() throws IOException {
        Path socket = start(dir.resolve("agent.sock")).socket();

        String answer = exchange(socket, "POST /status HTTP/1.1\r\nHost: localhost\r\nContent-Length: 0\r\n\r\n");

        assertThat(answer).startsWith("HTTP/1.1 405 ").contains("Allow: GET, HEAD\r\n");
    }

    @Test
    void start_socketFile_isOwnerOnly() throws IOException {
        Path socket = start(dir.resolve("agent.sock")).socket();

        assertThat(Files.getPosixFilePermissions(socket, LinkOption.NOFOLLOW_LINKS))
                .isEqualTo(PosixFilePermissions.fromString("rw-------"));
        assertThat(Files.readAttributes(socket, "unix:mode", LinkOption.NOFOLLOW_LINKS).get("mode"))
                .isEqualTo(0140600); // a socket, 0600
        assertThat(dir.toFile().list()).as("the private directory it bound in is gone").containsExactly("agent.sock");
    }

    @Test
    void start_missingParent_isCreatedOwnerOnly() throws IOException {
        Path socket = start(dir.resolve("run/satoken/agent.sock")).socket();

        assertThat(Files.getPosixFilePermissions(socket.getParent()))
                .isEqualTo(PosixFilePermissions.fromString("rwx------"));
        assertThat(UnixSocketClient.get(socket, "/status", TIMEOUT).status()).isEqualTo(200);
    }

    @Test
    void start_staleSocketOfADeadProcess_isReplaced() throws IOException {
        Path socket = dir.resolve("agent.sock");
        try (ServerSocketChannel dead = ServerSocketChannel.open(StandardProtocolFamily.UNIX)) {
            dead.bind(UnixDomainSocketAddress.of(socket));
        }
        assertThat(socket).as("closing a channel leaves its socket file").exists();

        start(socket);

        assertThat(UnixSocketClient.get(socket, "/status", TIMEOUT).status()).isEqualTo(200);
    }

    @Test
    void start_liveServerOnThePath_failsNamingThePath_andLeavesItServing() throws IOException {
        Path socket = start(dir.resolve("agent.sock")).socket();
        UnixSocketServer second = open(new UnixSocketServer(socket, UnixSocketServerTest::answer, "second"));

        assertThatThrownBy(second::start).isInstanceOf(IOException.class)
                .hasMessage(socket + ": another process serves it");
        assertThat(UnixSocketClient.get(socket, "/status", TIMEOUT).status()).isEqualTo(200);
    }

    @Test
    void start_regularFileAtThePath_failsAndIsNotDeleted() throws IOException {
        Path socket = Files.writeString(dir.resolve("agent.sock"), "keep me");
        UnixSocketServer server = open(new UnixSocketServer(socket, UnixSocketServerTest::answer, "test-socket"));

        assertThatThrownBy(server::start).isInstanceOf(IOException.class)
                .hasMessageStartingWith(socket + ": it is not a socket");
        assertThat(Files.readString(socket)).isEqualTo("keep me");
    }

    @Test
    void close_deletesTheSocketFile_andIsIdempotent() throws IOException {
        UnixSocketServer server = start(dir.resolve("agent.sock"));

        server.close();
        server.close();

        assertThat(server.socket()).doesNotExist();
        assertThatThrownBy(() -> UnixSocketClient.get(server.socket(), "/status", TIMEOUT))
                .isInstanceOf(IOException.class).hasMessageStartingWith(server.socket() + ": cannot connect: ");
    }

    @Test
    void close_socketReplacedByAnotherServer_leavesTheirs() throws IOException {
        UnixSocketServer server = start(dir.resolve("agent.sock"));
        Files.delete(server.socket());
        UnixSocketServer replacement = start(server.socket());

        server.close();

        assertThat(UnixSocketClient.get(replacement.socket(), "/status", TIMEOUT).status()).isEqualTo(200);
    }

    @Test
    void halfRequest_doesNotDelayAnotherClientsAnswer() throws IOException {
        Path socket = start(dir.resolve("agent.sock")).socket();
        for (int i = 0; i < 10; i++) { // more than the workers, and than one TCP client's share
            send(connect(socket), "GET /sta");
        }

        assertThat(UnixSocketClient.get(socket, "/status", TIMEOUT).status()).isEqualTo(200);
    }

    @Test
    @Timeout(value = 15, unit = TimeUnit.SECONDS) // the read below has no timeout of its own
    void halfRequest_isClosedAtTheReadTimeout() throws IOException {
        Limits limits = new Limits(Duration.ofMillis(300), Duration.ofSeconds(10), 8192, 64, 64, 2);
        UnixSocketServer server = open(new UnixSocketServer(dir.resolve("agent.sock"), UnixSocketServerTest::answer,
                "test-socket", limits));
        server.start();
        SocketChannel half = connect(server.socket());
        send(half, "GET /status HTTP/1.1\r\nHost:");

        assertThat(half.read(ByteBuffer.allocate(64))).as("end of stream").isEqualTo(-1);
    }

    // --- helpers ---------------------------------------------------------------------------------

    private static UnixSocketServer.Answer answer(String path) {
        return UnixSocketServer.Answer.json("{\"path\":\"" + path + "\",\"note\":\"é\"}");
    }

    private UnixSocketServer start(Path socket) throws IOException {
        UnixSocketServer server = open(new UnixSocketServer(socket, UnixSocketServerTest::answer, "test-socket"));
        server.start();
        return server;
    }

    private <T extends AutoCloseable> T open(T closeable) {
        open.add(closeable);
        return closeable;
    }

    private SocketChannel connect(Path socket) throws IOException {
        return open(SocketChannel.open(UnixDomainSocketAddress.of(socket)));
    }

    private static void send(SocketChannel channel, String bytes) throws IOException {
        ByteBuffer buffer = ByteBuffer.wrap(bytes.getBytes(StandardCharsets.US_ASCII));
        while (buffer.hasRemaining()) {
            channel.write(buffer);
        }
    }

    /** Sends {@code request} and reads the answer until the server closes. */
    private String exchange(Path socket, String request) throws IOException {
        SocketChannel channel = connect(socket);
        send(channel, request);
        ByteBuffer answer = ByteBuffer.allocate(4096);
        while (channel.read(answer) >= 0 && answer.hasRemaining()) {
            // until the server closes
        }
        return new String(answer.array(), 0, answer.position(), StandardCharsets.ISO_8859_1);
    }
}
