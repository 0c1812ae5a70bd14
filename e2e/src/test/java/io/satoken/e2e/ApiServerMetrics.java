package io.satoken.e2e;

import io.satoken.common.testing.KubeApiServer;
import io.satoken.common.testing.PrometheusText;
import java.io.IOException;
import okhttp3.Request;
import okhttp3.Response;

/**
 * What kube-apiserver itself counted, from its own {@code /metrics} (read as admin): the TokenRequests it
 * served ({@code apiserver_request_total} for {@code serviceaccounts/token} POSTs), independent of what
 * the agent claims to have sent.
 */
final class ApiServerMetrics {

    private ApiServerMetrics() {
    }

    static String scrape(KubeApiServer server) throws IOException {
        Request req = new Request.Builder().url(server.url() + "/metrics")
                .header("Authorization", "Bearer " + server.adminToken()).build();
        try (Response r = server.adminClient().getHttpClient().newCall(req).execute()) {
            if (r.code() != 200) {
                throw new IOException("kube-apiserver /metrics answered " + r.code());
            }
            return r.body().string();
        }
    }

    /** TokenRequests the server answered, with HTTP status {@code code}, or any status when null. */
    static double tokenRequests(KubeApiServer server, String code) throws IOException {
        String text = scrape(server);
        return code == null
                ? PrometheusText.value(text, "apiserver_request_total", "resource=\"serviceaccounts\"",
                        "subresource=\"token\"", "verb=\"POST\"")
                : PrometheusText.value(text, "apiserver_request_total", "resource=\"serviceaccounts\"",
                        "subresource=\"token\"", "verb=\"POST\"", "code=\"" + code + "\"");
    }
}
