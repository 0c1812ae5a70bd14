package io.satoken.common.health;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.SelectionKey;
import java.nio.channels.SocketChannel;

/**
 * One client connection of {@link NonBlockingHttpServer} through its steps 2 to 5, on the network thread only.
 */
final class HttpConnection {

    /** Where a connection is in the server's steps. */
    enum State { READING, HANDLING, WRITING, LINGERING }

    final SocketChannel channel;
    final SelectionKey key;
    final ClientKey client;
    private final NonBlockingHttpServer server;
    private final Limits limits;
    private final ByteBuffer head;
    State state = State.READING;
    long deadline;
    private ByteBuffer answer;

    HttpConnection(NonBlockingHttpServer server, Limits limits, SocketChannel channel,
            SelectionKey key, ClientKey client) {
        this.server = server;
        this.limits = limits;
        this.channel = channel;
        this.key = key;
        this.client = client;
        this.head = ByteBuffer.allocate(limits.maxHeadBytes());
        this.deadline = System.nanoTime() + limits.readTimeout().toNanos();
    }

    /** Step 2 (and 5): reads the request head, or drains what the client still sends while lingering. */
    void readable(ByteBuffer discard) throws IOException {
        if (state == State.LINGERING) {
            discard.clear();
            if (channel.read(discard) < 0) {
                server.close(this);
            }
            return;
        }
        int scanFrom = Math.max(0, head.position() - 3);
        if (channel.read(head) < 0) {
            server.close(this);
            return;
        }
        int end = RequestHead.end(head, scanFrom);
        if (end >= 0) {
            handle(end);
        } else if (!head.hasRemaining()) {
            respond(Response.text(431, "request headers exceed " + limits.maxHeadBytes() + " bytes\n"), false);
        }
    }

    /** Step 3. */
    private void handle(int end) throws IOException {
        Request request;
        try {
            request = RequestHead.parse(head, end);
        } catch (IllegalArgumentException e) {
            respond(Response.text(400, e.getMessage() + "\n"), false);
            return;
        }
        state = State.HANDLING;
        key.interestOps(0);
        deadline = System.nanoTime() + limits.writeTimeout().toNanos();
        server.dispatch(this, request, request.method().equals("HEAD"));
    }

    /** A worker's answer, back on the network thread: written unless the connection was closed meanwhile. */
    void answered(Response response, boolean headOnly) {
        if (state == State.HANDLING && channel.isOpen()) {
            try {
                respond(response, headOnly);
            } catch (IOException | RuntimeException e) {
                server.close(this);
            }
        }
    }

    /** Step 4. */
    void respond(Response response, boolean headOnly) throws IOException {
        answer = response.bytes(headOnly);
        state = State.WRITING;
        deadline = System.nanoTime() + limits.writeTimeout().toNanos();
        key.interestOps(SelectionKey.OP_WRITE);
        writable();
    }

    /** Steps 4 and 5. */
    void writable() throws IOException {
        channel.write(answer);
        if (answer.hasRemaining()) {
            return;
        }
        answer = null;
        channel.shutdownOutput();
        state = State.LINGERING;
        deadline = System.nanoTime() + NonBlockingHttpServer.LINGER.toNanos();
        key.interestOps(SelectionKey.OP_READ);
    }
}
