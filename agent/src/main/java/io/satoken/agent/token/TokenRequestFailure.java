package io.satoken.agent.token;

import io.kubernetes.client.openapi.ApiException;
import io.kubernetes.client.openapi.models.V1Status;
import io.kubernetes.client.openapi.models.V1StatusDetails;
import io.satoken.common.kube.Failures;
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

    private TokenRequestFailure() {
    }

    static String prefix(TokenKey key) {
        return "TokenRequest for " + key.namespace() + "/" + key.serviceAccount() + " failed: ";
    }

    static TokenSourceException toException(TokenKey key, ApiException e) {
        int code = e.getCode();
        if (code == 0) {
            return new TokenSourceException(prefix(key) + Failures.said(e), e);
        }
        V1Status status = Failures.status(e.getResponseBody());
        String message = prefix(key) + Failures.said(e);
        if (isPermanent(code)) {
            return TokenSourceException.permanent(message, e);
        }
        return new TokenSourceException(message, retryAfter(e.getResponseHeaders(), status), e);
    }

    static boolean isPermanent(int code) {
        return code >= 400 && code < 500 && code != 401 && code != 408 && code != 429;
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
}
