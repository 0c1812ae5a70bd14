package io.satoken.agent.token;

import io.kubernetes.client.openapi.ApiException;
import io.kubernetes.client.openapi.JSON;
import io.kubernetes.client.openapi.models.V1Status;
import io.kubernetes.client.openapi.models.V1StatusDetails;
import java.time.Duration;
import java.util.List;
import java.util.Map;

/**
 * Turns a failed TokenRequest call into a {@link TokenSourceException} that says whether to retry.
 *
 * <ul>
 *   <li>No response (connection refused, timeout), 401, 408, 429 and 5xx are retryable, with the
 *       server's Retry-After (header, else the Status's {@code details.retryAfterSeconds}).
 *       401 is retryable because the agent's own credentials may be rotated on disk and re-read.
 *   <li>Every other 4xx is permanent: 400 (Pod runs as another ServiceAccount), 403 (not allowed),
 *       404 (no such ServiceAccount or Pod), 409 (the bound Pod's uid is not the live Pod's: it was
 *       deleted and recreated), 422 (invalid spec). The same key will fail the same way.
 * </ul>
 *
 * <p>The message is {@code TokenRequest for <ns>/<sa> failed: <code> <reason>: <Status message>}. It
 * names the key and the server's words, never the token or the request body.
 */
final class TokenRequestFailure {

    private static final int MAX_BODY_IN_MESSAGE = 200;

    private TokenRequestFailure() {
    }

    static String prefix(TokenKey key) {
        return "TokenRequest for " + key.namespace() + "/" + key.serviceAccount() + " failed: ";
    }

    static TokenSourceException toException(TokenKey key, ApiException e) {
        int code = e.getCode();
        if (code == 0) {
            return new TokenSourceException(prefix(key) + serverSaid(e), e);
        }
        V1Status status = parseStatus(e.getResponseBody());
        String message = prefix(key) + serverSaid(e);
        if (isPermanent(code)) {
            return TokenSourceException.permanent(message, e);
        }
        return new TokenSourceException(message, retryAfter(e.getResponseHeaders(), status), e);
    }

    /**
     * What the API server said to a failed call, {@code <code> <reason>: <Status message>}, or that it did not answer:
     * its words, never the request's.
     */
    static String serverSaid(ApiException e) {
        int code = e.getCode();
        if (code == 0) {
            Throwable cause = e.getCause() == null ? e : e.getCause();
            return "no response from the API server: " + cause.getClass().getSimpleName() + ": " + cause.getMessage();
        }
        return code + reasonPhrase(code) + ": " + describe(parseStatus(e.getResponseBody()), e.getResponseBody());
    }

    static boolean isPermanent(int code) {
        return code >= 400 && code < 500 && code != 401 && code != 408 && code != 429;
    }

    private static V1Status parseStatus(String body) {
        if (body == null || body.isBlank()) {
            return null;
        }
        try {
            V1Status status = JSON.deserialize(body, V1Status.class);
            return status != null && "Status".equals(status.getKind()) ? status : null;
        } catch (RuntimeException notAStatus) {
            return null; // e.g. an HTML page from a proxy; described from the raw body below
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

    /** Retry-After as delay-seconds; the HTTP-date form is not used by the API server and is ignored. */
    static Duration retryAfter(Map<String, List<String>> headers, V1Status status) {
        if (headers != null) {
            for (Map.Entry<String, List<String>> h : headers.entrySet()) {
                if ("Retry-After".equalsIgnoreCase(h.getKey()) && h.getValue() != null) {
                    for (String value : h.getValue()) {
                        try {
                            long seconds = Long.parseLong(value.trim());
                            if (seconds >= 0) {
                                return Duration.ofSeconds(seconds);
                            }
                        } catch (NumberFormatException httpDate) {
                            // fall through to the Status details
                        }
                    }
                }
            }
        }
        V1StatusDetails details = status == null ? null : status.getDetails();
        if (details != null && details.getRetryAfterSeconds() != null && details.getRetryAfterSeconds() > 0) {
            return Duration.ofSeconds(details.getRetryAfterSeconds());
        }
        return null;
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
