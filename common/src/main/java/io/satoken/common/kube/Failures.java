package io.satoken.common.kube;

import io.kubernetes.client.openapi.ApiException;
import io.kubernetes.client.openapi.JSON;
import io.kubernetes.client.openapi.models.V1Status;
import io.satoken.common.paths.FileErrors;
import java.io.EOFException;
import java.io.IOException;
import java.io.InterruptedIOException;
import java.net.ConnectException;
import java.net.SocketTimeoutException;
import java.net.UnknownHostException;
import java.nio.file.FileSystemException;
import javax.net.ssl.SSLException;

/**
 * A failure in the words a log line or an error message gives it: what the API server answered (its code and its
 * Status's message), that it did not answer and why, or why a file could not be read. Never a Java class name,
 * never {@code null}, and never more than the first line of what a library said.
 */
public final class Failures {

    private static final int MAX_BODY_IN_MESSAGE = 200;

    private Failures() {
    }

    /** The failure in words; a wrapper without a message of its own is described by its cause. */
    public static String inWords(Throwable e) {
        if (e instanceof ApiException api) {
            return said(api);
        }
        if (e instanceof FileSystemException file) {
            return FileErrors.describe(file);
        }
        Throwable cause = e.getCause() == e ? null : e.getCause();
        if (cause != null && (e.getMessage() == null || e.getMessage().equals(cause.toString()))) {
            return inWords(cause); // a wrapper that only repeats its cause
        }
        String message = firstLine(e.getMessage());
        if (e instanceof SocketTimeoutException || e instanceof InterruptedIOException) {
            return "timed out" + (message == null ? "" : " (" + message + ")");
        }
        if (e instanceof ConnectException) {
            return message == null ? "connection refused" : message;
        }
        if (e instanceof UnknownHostException) {
            return "unknown host" + (message == null ? "" : " " + message);
        }
        if (e instanceof SSLException) {
            return "TLS failed" + (message == null ? "" : ": " + message);
        }
        if (e instanceof EOFException) {
            return "the connection ended early";
        }
        if (message != null) {
            return message;
        }
        return e instanceof IOException ? "input/output error" : "failed without saying why";
    }

    /**
     * What the API server said to a failed call, {@code <code> <reason>: <Status message>}, or that it did not
     * answer and why: its words, never the request's.
     */
    public static String said(ApiException e) {
        int code = e.getCode();
        if (code == 0) {
            Throwable cause = e.getCause() == null || e.getCause() == e ? null : e.getCause();
            return "no response from the API server: " + (cause == null ? "no answer" : inWords(cause));
        }
        return code + reasonPhrase(code) + ": " + describe(status(e.getResponseBody()), e.getResponseBody());
    }

    /** The API server's Status in a response body, or null when the body is not one. */
    public static V1Status status(String body) {
        if (body == null || body.isBlank()) {
            return null;
        }
        try {
            V1Status status = JSON.deserialize(body, V1Status.class);
            return status != null && "Status".equals(status.getKind()) ? status : null;
        } catch (RuntimeException notAStatus) {
            return null; // e.g. an HTML page from a proxy; described from the raw body
        }
    }

    private static String describe(V1Status status, String body) {
        if (status != null && status.getMessage() != null && !status.getMessage().isEmpty()) {
            return status.getMessage();
        }
        if (body == null || body.isBlank()) {
            return "(empty response body)";
        }
        String flat = body.strip().replaceAll("\\s+", " ");
        return flat.length() <= MAX_BODY_IN_MESSAGE ? flat : flat.substring(0, MAX_BODY_IN_MESSAGE) + "...";
    }

    private static String firstLine(String message) {
        if (message == null || message.isBlank()) {
            return null;
        }
        return message.strip().lines().findFirst().orElse(null);
    }

    private static String reasonPhrase(int code) {
        String phrase = switch (code) {
            case 400 -> "Bad Request";
            case 401 -> "Unauthorized";
            case 403 -> "Forbidden";
            case 404 -> "Not Found";
            case 405 -> "Method Not Allowed";
            case 408 -> "Request Timeout";
            case 409 -> "Conflict";
            case 410 -> "Gone";
            case 413 -> "Payload Too Large";
            case 415 -> "Unsupported Media Type";
            case 422 -> "Unprocessable Entity";
            case 429 -> "Too Many Requests";
            case 500 -> "Internal Server Error";
            case 502 -> "Bad Gateway";
            case 503 -> "Service Unavailable";
            case 504 -> "Gateway Timeout";
            default -> null;
        };
        return phrase == null ? "" : " " + phrase;
    }
}
