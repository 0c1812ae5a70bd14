package io.satoken.e2e;

import io.satoken.common.testing.KubeApiServer;
import io.satoken.common.testing.PrometheusText;
import java.io.IOException;

/**
 * What kube-apiserver itself counted, from its own {@code /metrics} (read as admin): the TokenRequests it
 * served ({@code apiserver_request_total} for {@code serviceaccounts/token} POSTs), independent of what
 * the agent claims to have sent.
 */
final class ApiServerMetrics {

    private ApiServerMetrics() {
    }

    /** TokenRequests the server answered, with HTTP status {@code code}, or any status when null. */
    static double tokenRequests(KubeApiServer server, String code) throws IOException {
        String text = server.metricsText();
        return code == null
                ? PrometheusText.value(text, "apiserver_request_total", "resource=\"serviceaccounts\"",
                        "subresource=\"token\"", "verb=\"POST\"")
                : PrometheusText.value(text, "apiserver_request_total", "resource=\"serviceaccounts\"",
                        "subresource=\"token\"", "verb=\"POST\"", "code=\"" + code + "\"");
    }
}
