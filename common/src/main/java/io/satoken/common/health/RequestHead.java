package io.satoken.common.health;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;

/** Finds where an HTTP/1.1 request's head ends and reads its request line (RFC 9112 §2–3). */
final class RequestHead {

    private RequestHead() {
    }

    /**
     * Where the head in {@code buffer[0, position)} ends: the index just past the empty line that closes it
     * (CRLF CRLF, or LF LF as RFC 9112 §2.2 lets a server accept), or -1 while it has not arrived.
     *
     * @param from where to start looking; the caller passes a little before the bytes it just read
     */
    static int end(ByteBuffer buffer, int from) {
        for (int i = from; i < buffer.position(); i++) {
            if (buffer.get(i) != '\n') {
                continue;
            }
            if (i >= 1 && buffer.get(i - 1) == '\n') {
                return i + 1;
            }
            if (i >= 3 && buffer.get(i - 1) == '\r' && buffer.get(i - 2) == '\n' && buffer.get(i - 3) == '\r') {
                return i + 1;
            }
        }
        return -1;
    }

    /**
     * The request line's method and path (the query dropped).
     *
     * @throws IllegalArgumentException saying what is wrong with the request line
     */
    static Request parse(ByteBuffer buffer, int end) {
        int lineEnd = 0;
        while (lineEnd < end && buffer.get(lineEnd) != '\n') {
            lineEnd++;
        }
        byte[] bytes = new byte[lineEnd];
        buffer.get(0, bytes);
        String line = new String(bytes, StandardCharsets.ISO_8859_1).strip();
        String[] parts = line.split(" ", -1);
        if (parts.length != 3 || parts[0].isEmpty() || !parts[0].chars().allMatch(c -> c >= 'A' && c <= 'Z')) {
            throw new IllegalArgumentException("malformed request line");
        }
        if (!parts[2].startsWith("HTTP/1.")) {
            throw new IllegalArgumentException("only HTTP/1.x is served");
        }
        if (!parts[1].startsWith("/")) {
            throw new IllegalArgumentException("the request target must be a path");
        }
        int query = parts[1].indexOf('?');
        return new Request(parts[0], query < 0 ? parts[1] : parts[1].substring(0, query));
    }

    static String reason(int status) {
        return switch (status) {
            case 200 -> "OK";
            case 400 -> "Bad Request";
            case 404 -> "Not Found";
            case 405 -> "Method Not Allowed";
            case 431 -> "Request Header Fields Too Large";
            case 500 -> "Internal Server Error";
            case 503 -> "Service Unavailable";
            default -> "Status " + status;
        };
    }
}
