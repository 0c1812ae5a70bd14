package io.satoken.common.health;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.Map;

/**
 * An answer of {@link NonBlockingHttpServer}; {@code headers} are sent besides Content-Type, Content-Length and
 * Connection.
 */
record Response(int status, String contentType, String body, Map<String, String> headers) {

    static Response text(int status, String body) {
        return new Response(status, "text/plain; charset=utf-8", body, Map.of());
    }

    /** The answer as sent on a connection the server closes after it; without the body for a HEAD request. */
    ByteBuffer bytes(boolean headOnly) {
        byte[] content = body.getBytes(StandardCharsets.UTF_8);
        StringBuilder lines = new StringBuilder("HTTP/1.1 ").append(status).append(' ')
                .append(RequestHead.reason(status)).append("\r\n")
                .append("Content-Type: ").append(contentType).append("\r\n")
                .append("Content-Length: ").append(content.length).append("\r\n")
                .append("Connection: close\r\n");
        headers.forEach((header, value) -> lines.append(header).append(": ").append(value).append("\r\n"));
        byte[] start = lines.append("\r\n").toString().getBytes(StandardCharsets.ISO_8859_1);
        ByteBuffer bytes = ByteBuffer.allocate(start.length + (headOnly ? 0 : content.length)).put(start);
        if (!headOnly) {
            bytes.put(content);
        }
        return bytes.flip();
    }
}
