package io.satoken.controlplane.runtime;

import io.kubernetes.client.openapi.ApiClient;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import okhttp3.Interceptor;
import okhttp3.Response;

/**
 * Counts the process's requests to the API server by verb and status code
 * ({@code satoken_api_requests_total}), so an operator sees what the control plane costs the API server.
 */
final class ApiRequestMetrics implements Interceptor {

    private final MeterRegistry registry;

    private ApiRequestMetrics(MeterRegistry registry) {
        this.registry = registry;
    }

    /** Adds the counter to every request {@code client} makes. */
    static void instrument(ApiClient client, MeterRegistry registry) {
        client.setHttpClient(client.getHttpClient().newBuilder().addInterceptor(new ApiRequestMetrics(registry)).build());
    }

    @Override
    public Response intercept(Chain chain) throws java.io.IOException {
        String verb = chain.request().method();
        if ("GET".equals(verb) && "true".equals(chain.request().url().queryParameter("watch"))) {
            verb = "WATCH";
        }
        String code = "error";
        try {
            Response response = chain.proceed(chain.request());
            code = String.valueOf(response.code());
            return response;
        } finally {
            Counter.builder("satoken_api_requests_total")
                    .description("Requests to the API server by verb and status code")
                    .tag("verb", verb)
                    .tag("code", code)
                    .register(registry)
                    .increment();
        }
    }
}
