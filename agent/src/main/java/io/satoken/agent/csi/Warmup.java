package io.satoken.agent.csi;

import io.kubernetes.client.openapi.ApiClient;
import io.kubernetes.client.openapi.ApiException;
import io.kubernetes.client.openapi.apis.VersionApi;
import io.kubernetes.client.openapi.models.AuthenticationV1TokenRequest;
import io.kubernetes.client.openapi.models.V1Pod;
import io.satoken.common.kube.Failures;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Loads, once at start and off the start-up path, what the first NodePublishVolume needs: the client's TLS
 * connection to the API server (one {@code GET /version}, which every identity may read) and the JSON
 * models of a Pod and a TokenRequest. Without it the first pod on a freshly started agent waited about
 * 2 s for class loading where later pods wait about 0.1 s (CsiNodeE2E, kubelet log). Nothing here is
 * needed for correctness: a failure is logged at debug and forgotten.
 */
final class Warmup {

    private static final Logger log = LoggerFactory.getLogger(Warmup.class);
    private static final String POD = "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"warmup\","
            + "\"namespace\":\"default\",\"uid\":\"0\"},\"spec\":{\"securityContext\":{\"fsGroup\":1},"
            + "\"containers\":[{\"name\":\"c\",\"securityContext\":{\"runAsUser\":1}}]}}";
    private static final String TOKEN_REQUEST = "{\"apiVersion\":\"authentication.k8s.io/v1\",\"kind\":\"TokenRequest\","
            + "\"spec\":{\"audiences\":[\"a\"],\"expirationSeconds\":600},\"status\":{\"token\":\"\","
            + "\"expirationTimestamp\":\"2026-01-01T00:00:00Z\"}}";

    private Warmup() {
    }

    /** Starts the warm-up on a daemon thread and returns at once. */
    static void start(ApiClient client) {
        Thread thread = new Thread(() -> run(client), "satoken-warmup");
        thread.setDaemon(true);
        thread.start();
    }

    private static void run(ApiClient client) {
        long start = System.nanoTime();
        try {
            client.getJSON().deserialize(POD, V1Pod.class);
            client.getJSON().deserialize(TOKEN_REQUEST, AuthenticationV1TokenRequest.class);
            new VersionApi(client).getCode().execute();
        } catch (ApiException | RuntimeException e) {
            log.debug("warm-up: {}", Failures.inWords(e));
        }
        log.debug("warm-up took {} ms", (System.nanoTime() - start) / 1_000_000);
    }
}
