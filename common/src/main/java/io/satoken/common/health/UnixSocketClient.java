package io.satoken.common.health;

import io.satoken.common.text.DurationText;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.net.SocketTimeoutException;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Locale;

/**
 * Asks a {@link UnixSocketServer} (or any HTTP/1.1 server on a Unix domain socket that sends Content-Length and
 * closes) one GET, under one deadline for connecting, sending and reading the whole answer.
 */
public final class UnixSocketClient {

    /** The answer's status and its body, decoded as UTF-8. */
    public record Reply(int status, String body) {}

    /** The most an answer may hold; a status endpoint's answers are far smaller. */
    static final int MAX_BODY_BYTES = 16 * 1024 * 1024;
    private static final int MAX_HEAD_BYTES = 64 * 1024;

    private final Path socket;
    private final Duration timeout;
    private final long deadline;
    private final SocketChannel channel;
    private final Selector selector;

    private UnixSocketClient(Path socket, Duration timeout, SocketChannel channel, Selector selector) {
        this.socket = socket;
        this.timeout = timeout;
        this.deadline = System.nanoTime() + timeout.toNanos();
        this.channel = channel;
        this.selector = selector;
    }

    /**
     * One GET over the socket (HTTP/1.1, Host: localhost, Connection: close), reading the whole answer within
     * {@code timeout}.
     *
     * @param path the request target, starting with "/"
     * @throws IOException naming the socket path: it cannot connect (no such file, refused, permission denied), the
     *                     answer did not come whole within the timeout, is malformed, or exceeds 16 MiB
     */
    public static Reply get(Path socket, String path, Duration timeout) throws IOException {
        if (!path.startsWith("/") || path.chars().anyMatch(c -> c <= ' ' || c >= 0x7f)) {
            throw new IllegalArgumentException("the request path must start with / and hold no spaces or controls, "
                    + "got \"" + path + "\"");
        }
        byte[] request = ("GET " + path + " HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n")
                .getBytes(StandardCharsets.US_ASCII);
        try (SocketChannel channel = SocketChannel.open(StandardProtocolFamily.UNIX);
             Selector selector = Selector.open()) {
            channel.configureBlocking(false);
            UnixSocketClient client = new UnixSocketClient(socket, timeout, channel, selector);
            client.connect();
            client.send(ByteBuffer.wrap(request));
            return parse(client.readAll(), socket);
        }
    }

    private void connect() throws IOException {
        try {
            if (!channel.connect(UnixDomainSocketAddress.of(socket))) {
                while (!channel.finishConnect()) {
                    await(SelectionKey.OP_CONNECT, "to connect");
                }
            }
        } catch (SocketTimeoutException e) {
            throw e;
        } catch (IOException e) {
            throw new IOException(socket + ": cannot connect: " + e.getMessage(), e);
        }
    }

    private void send(ByteBuffer request) throws IOException {
        while (request.hasRemaining()) {
            if (channel.write(request) == 0) {
                await(SelectionKey.OP_WRITE, "to send the request");
            }
        }
    }

    /** Reads until the server closes, within the deadline and the size limit. */
    private byte[] readAll() throws IOException {
        ByteArrayOutputStream answer = new ByteArrayOutputStream();
        ByteBuffer buffer = ByteBuffer.allocate(64 * 1024);
        while (true) {
            buffer.clear();
            int read = channel.read(buffer);
            if (read < 0) {
                return answer.toByteArray();
            }
            if (read == 0) {
                await(SelectionKey.OP_READ, "for the whole answer");
                continue;
            }
            if (answer.size() + read > MAX_HEAD_BYTES + MAX_BODY_BYTES) {
                throw new IOException(socket + ": the answer exceeds " + MAX_BODY_BYTES + " bytes");
            }
            answer.write(buffer.array(), 0, read);
        }
    }

    /** Waits until the channel is ready for {@code ops}, or the select wakes early; past the deadline, throws. */
    private void await(int ops, String waitingFor) throws IOException {
        SelectionKey key = channel.keyFor(selector);
        if (key == null) {
            channel.register(selector, ops);
        } else {
            key.interestOps(ops);
        }
        long left = deadline - System.nanoTime();
        // rounded up: select(0) would wait forever
        int ready = left > 0 ? selector.select(Math.max(1, (left + 999_999) / 1_000_000)) : 0;
        selector.selectedKeys().clear();
        if (ready == 0 && deadline - System.nanoTime() <= 0) {
            throw new SocketTimeoutException(socket + ": waited " + DurationText.of(timeout) + " " + waitingFor);
        }
    }

    /** The status line, Content-Length and the body of an answer the server closed after. */
    private static Reply parse(byte[] answer, Path socket) throws IOException {
        int headEnd = -1;
        for (int i = 3; i < answer.length && i < MAX_HEAD_BYTES; i++) {
            if (answer[i] == '\n' && answer[i - 1] == '\r' && answer[i - 2] == '\n' && answer[i - 3] == '\r') {
                headEnd = i + 1;
                break;
            }
        }
        if (headEnd < 0) {
            throw new IOException(socket + ": malformed answer: no complete head in " + answer.length + " bytes");
        }
        String[] lines = new String(answer, 0, headEnd, StandardCharsets.ISO_8859_1).split("\r\n");
        String[] status = lines[0].split(" ", 3);
        int code;
        try {
            if (status.length < 2 || !status[0].startsWith("HTTP/1.") || status[1].length() != 3) {
                throw new NumberFormatException();
            }
            code = Integer.parseInt(status[1]);
        } catch (NumberFormatException e) {
            throw new IOException(socket + ": malformed status line \"" + lines[0] + "\"");
        }
        int length = answer.length - headEnd;
        for (int i = 1; i < lines.length; i++) {
            int colon = lines[i].indexOf(':');
            if (colon > 0 && lines[i].substring(0, colon).strip().toLowerCase(Locale.ROOT).equals("content-length")) {
                length = contentLength(lines[i].substring(colon + 1).strip(), socket);
            }
        }
        if (answer.length - headEnd < length) {
            throw new IOException(socket + ": the answer was cut short: " + (answer.length - headEnd) + " of "
                    + length + " body bytes");
        }
        return new Reply(code, new String(answer, headEnd, length, StandardCharsets.UTF_8));
    }

    private static int contentLength(String value, Path socket) throws IOException {
        try {
            int length = Integer.parseInt(value);
            if (length < 0 || length > MAX_BODY_BYTES) {
                throw new NumberFormatException();
            }
            return length;
        } catch (NumberFormatException e) {
            throw new IOException(socket + ": Content-Length must be 0 to " + MAX_BODY_BYTES + ", got \"" + value
                    + "\"");
        }
    }
}
