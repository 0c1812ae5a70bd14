package io.satoken.e2e;

import io.satoken.common.testing.PrometheusText;
import static org.assertj.core.api.Assertions.assertThat;

import com.google.gson.Gson;
import com.google.gson.JsonObject;
import com.sun.net.httpserver.HttpsConfigurator;
import com.sun.net.httpserver.HttpsServer;
import io.kubernetes.client.openapi.ApiClient;
import io.kubernetes.client.openapi.ApiException;
import io.kubernetes.client.openapi.apis.AdmissionregistrationV1Api;
import io.kubernetes.client.openapi.apis.CoreV1Api;
import io.kubernetes.client.openapi.apis.RbacAuthorizationV1Api;
import io.kubernetes.client.openapi.apis.VersionApi;
import io.kubernetes.client.openapi.models.AdmissionregistrationV1WebhookClientConfig;
import io.kubernetes.client.openapi.models.AuthenticationV1TokenRequest;
import io.kubernetes.client.openapi.models.RbacV1Subject;
import io.kubernetes.client.openapi.models.V1BoundObjectReference;
import io.kubernetes.client.openapi.models.V1ConfigMap;
import io.kubernetes.client.openapi.models.V1LabelSelector;
import io.kubernetes.client.openapi.models.V1Namespace;
import io.kubernetes.client.openapi.models.V1ObjectMeta;
import io.kubernetes.client.openapi.models.V1Pod;
import io.kubernetes.client.openapi.models.V1PolicyRule;
import io.kubernetes.client.openapi.models.V1Role;
import io.kubernetes.client.openapi.models.V1RoleBinding;
import io.kubernetes.client.openapi.models.V1RoleRef;
import io.kubernetes.client.openapi.models.V1RuleWithOperations;
import io.kubernetes.client.openapi.models.V1TokenRequestSpec;
import io.kubernetes.client.openapi.models.V1ValidatingWebhook;
import io.kubernetes.client.openapi.models.V1ValidatingWebhookConfiguration;
import io.kubernetes.client.util.generic.dynamic.DynamicKubernetesApi;
import io.kubernetes.client.util.generic.dynamic.DynamicKubernetesObject;
import io.satoken.common.kube.KubeClients;
import io.satoken.common.kube.RateLimiter;
import io.satoken.common.testing.KubeApiServer;
import io.satoken.common.testing.RequiresKubeApiServer;
import io.satoken.controlplane.webhook.TestCertificates;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.SocketTimeoutException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyFactory;
import java.security.KeyStore;
import java.security.PrivateKey;
import java.security.cert.Certificate;
import java.security.spec.PKCS8EncodedKeySpec;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import javax.net.ssl.KeyManagerFactory;
import javax.net.ssl.SSLContext;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;
import org.yaml.snakeyaml.LoaderOptions;
import org.yaml.snakeyaml.Yaml;
import org.yaml.snakeyaml.constructor.SafeConstructor;

/**
 * The agent's FlowSchema and PriorityLevelConfiguration ({@code agent/deploy/components/apf}) on a real
 * kube-apiserver under contention. The server's concurrency is lowered to 30 seats
 * ({@code --max-requests-inflight=20}, {@code --max-mutating-requests-inflight=10}; APF on) so that two cores
 * can fill it. The noise: {@value #NOISY_ACCOUNTS} ServiceAccounts (so {@value #NOISY_ACCOUNTS} flows of the
 * built-in {@code service-accounts} schema, in {@code workload-low}), {@value #NOISY_THREADS} threads each,
 * creating ConfigMaps (dry run) through a validating webhook that answers after {@value #WEBHOOK_MILLIS} ms:
 * each holds a seat that long without costing the server CPU, until workload-low sheds them with 429.
 * The agent: its ServiceAccount ({@code agent/deploy/10-rbac.yaml}), {@value #AGENT_THREADS} threads (its refresh
 * threads) behind its own client-side limit (common's {@link RateLimiter}, the agent's defaults 20 qps, burst 40),
 * asking for pod-bound tokens for {@link #AGENT_SECONDS} s.
 *
 * <p>Three phases on one server: the agent alone; with the noise and without the FlowSchema (the agent is one
 * more flow in workload-low); with the noise and the FlowSchema applied as shipped (on servers before 1.29,
 * which serve flowcontrol only up to v1beta3, its apiVersion is rewritten to v1beta3: same fields). Proven:
 * the noise gets 429s in both noisy phases (the contention is real); with the FlowSchema the agent's requests
 * are served in its level, none gets a 429 and the agent keeps the rate it has alone (its cap); without it
 * they are slowed.
 */
@RequiresKubeApiServer
class ApfE2E {

    private static final String TEST = "apf";
    static final int NOISY_ACCOUNTS = 10;
    static final int NOISY_THREADS = 30;
    static final int WEBHOOK_MILLIS = 3000;
    static final int AGENT_THREADS = 4;
    static final int AGENT_SECONDS = 20;
    static final Path FLOWCONTROL = E2E.repo().resolve("agent/deploy/components/apf/flowcontrol.yaml");

    @RegisterExtension
    static final ApiServerFixture API = new ApiServerFixture(TEST, b -> b
            .flag("--max-requests-inflight", "20")
            .flag("--max-mutating-requests-inflight", "10"));

    @Test
    void agentsTokenRequests_keepTheirRate_underWorkloadLowFlood_withTheFlowSchemaOnly(@TempDir Path tmp)
            throws Exception {
        KubeApiServer server = API.server();
        CoreV1Api admin = new CoreV1Api(server.adminClient());
        int minor = Integer.parseInt(new VersionApi(server.adminClient()).getCode().execute().getMinor()
                .replaceAll("\\D", ""));
        String version = "v1." + minor;

        // the agent: its own RBAC, a pod to bind tokens to, a token of its ServiceAccount
        AgentIdentity.kubeconfig(server, tmp.resolve("agent.kubeconfig"));
        String app = server.createNamespace("apf-app");
        server.createServiceAccount(app, "web");
        V1Pod web = WholeFlowE2E.pod("web", "node-a");
        web.getSpec().serviceAccountName("web");
        web = admin.createNamespacedPod(app, web).execute();
        ApiClient agentClient = server.clientFor(server.serviceAccountToken(AgentIdentity.NAMESPACE,
                AgentIdentity.SERVICE_ACCOUNT));
        agentClient.setReadTimeout((int) KubeClients.READ_TIMEOUT.toMillis()); // the agent's own
        // the noise: ServiceAccounts that may create ConfigMaps in their namespace, and a slow webhook
        String noise = noisyAccounts(server);
        try (SlowWebhook webhook = SlowWebhook.start(tmp)) {
            register(server, webhook, noise);
            List<ApiClient> noisy = new ArrayList<>();
            for (int i = 0; i < NOISY_ACCOUNTS; i++) {
                ApiClient c = server.clientFor(server.serviceAccountToken(noise, "noisy-" + i));
                c.setReadTimeout(120_000);
                noisy.add(c);
            }
            awaitSlowWebhook(noisy.get(0), noise);

            Phase alone = agentPhase(server, agentClient, app, web, null, noise);
            Figures.record(TEST, version + " agent alone: " + alone);
            Phase without = agentPhase(server, agentClient, app, web, noisy, noise);
            Figures.record(TEST, version + " flood, no FlowSchema: " + without);
            applyFlowControl(server, minor);
            Phase with = agentPhase(server, agentClient, app, web, noisy, noise);
            Figures.record(TEST, version + " flood, FlowSchema applied: " + with);

            assertThat(without.noise429()).as("the flood was shed with 429 (contention reached)").isPositive();
            assertThat(with.noise429()).as("the flood was shed with 429 (contention reached)").isPositive();
            assertThat(without.inAgentLevel()).as("no FlowSchema: nothing in satoken-agent").isZero();
            assertThat(with.inAgentLevel()).as("every TokenRequest in the agent's level").isEqualTo(with.requests());
            assertThat(with.agent429()).as("no TokenRequest refused with the FlowSchema").isZero();
            assertThat(with.timeouts()).as("no TokenRequest timed out with the FlowSchema").isZero();
            // its own cap, or what it reached alone where the machine itself holds it back
            assertThat(with.rate()).as("the agent keeps the rate it has alone (at most its cap) with the FlowSchema")
                    .isGreaterThanOrEqualTo(0.9 * Math.min(alone.rate(), RateLimiter.DEFAULT_QPS));
            assertThat(without.rate()).as("without the FlowSchema the TokenRequests wait in workload-low")
                    .isLessThan(0.5 * with.rate());
        }
    }

    record Phase(int requests, double seconds, int agent429, int timeouts, double p50Ms, double p99Ms,
            double noise429, double inAgentLevel) {
        double rate() {
            return requests / seconds;
        }

        @Override
        public String toString() {
            return String.format("%d TokenRequests in %.1f s (%.1f/s), %d answered 429, %d timed out after %d s, "
                    + "latency p50 %.1f ms, p99 %.1f ms; noise answered 429: %.0f; dispatched in priority level "
                    + "satoken-agent: %.0f", requests, seconds, rate(), agent429, timeouts,
                    KubeClients.READ_TIMEOUT.toSeconds(), p50Ms, p99Ms, noise429, inAgentLevel);
        }
    }

    /** The agent's TokenRequests for {@link #AGENT_SECONDS} s, with the noise running when {@code noisy} is given. */
    static Phase agentPhase(KubeApiServer server, ApiClient agentClient, String app, V1Pod web,
            List<ApiClient> noisy, String noise) throws Exception {
        String before = server.metricsText();
        AtomicBoolean flooding = new AtomicBoolean(noisy != null);
        ExecutorService noiseThreads = Executors.newFixedThreadPool(NOISY_ACCOUNTS * NOISY_THREADS);
        if (noisy != null) {
            for (ApiClient client : noisy) {
                CoreV1Api api = new CoreV1Api(client);
                for (int t = 0; t < NOISY_THREADS; t++) {
                    noiseThreads.submit(() -> {
                        while (flooding.get()) {
                            try {
                                api.createNamespacedConfigMap(noise, new V1ConfigMap().metadata(
                                        new V1ObjectMeta().generateName("noise-"))).dryRun("All").execute();
                            } catch (ApiException e) {
                                // 429 (shed) or a timeout: the flood goes on
                            }
                        }
                        return null;
                    });
                }
            }
            SatokenProcess.pause(Duration.ofSeconds(2 * WEBHOOK_MILLIS / 1000 + 4)); // every seat taken, queues full
        }
        CoreV1Api agent = new CoreV1Api(agentClient);
        RateLimiter limiter = new RateLimiter(RateLimiter.DEFAULT_QPS, RateLimiter.DEFAULT_BURST,
                RateLimiter.DEFAULT_MAX_WAIT);
        List<Long> nanos = Collections.synchronizedList(new ArrayList<>());
        AtomicInteger refused = new AtomicInteger();
        AtomicInteger timedOut = new AtomicInteger();
        long start = System.nanoTime();
        long end = start + TimeUnit.SECONDS.toNanos(AGENT_SECONDS);
        ExecutorService agentThreads = Executors.newFixedThreadPool(AGENT_THREADS);
        List<Future<?>> running = new ArrayList<>();
        AuthenticationV1TokenRequest request = new AuthenticationV1TokenRequest().spec(new V1TokenRequestSpec()
                .expirationSeconds(3600L).audiences(List.of("apf-e2e")).boundObjectRef(new V1BoundObjectReference()
                        .kind("Pod").apiVersion("v1").name(web.getMetadata().getName()).uid(web.getMetadata().getUid())));
        for (int t = 0; t < AGENT_THREADS; t++) {
            running.add(agentThreads.submit(() -> {
                while (System.nanoTime() < end) {
                    if (!limiter.acquire()) {
                        continue;
                    }
                    long sent = System.nanoTime();
                    try {
                        IssuedTokens.record(agent.createNamespacedServiceAccountToken("web", app, request).execute()
                                .getStatus().getToken());
                        nanos.add(System.nanoTime() - sent);
                    } catch (ApiException e) {
                        if (e.getCode() == 429) {
                            refused.incrementAndGet();
                        } else if (e.getCode() == 0 && e.getCause() instanceof SocketTimeoutException) {
                            timedOut.incrementAndGet(); // the agent's read timeout: it would retry later
                        } else {
                            throw e;
                        }
                    }
                }
                return null;
            }));
        }
        for (Future<?> f : running) {
            f.get(AGENT_SECONDS + 120, TimeUnit.SECONDS);
        }
        double seconds = (System.nanoTime() - start) / 1e9;
        agentThreads.shutdown();
        flooding.set(false);
        noiseThreads.shutdown();
        assertThat(noiseThreads.awaitTermination(3, TimeUnit.MINUTES)).as("the flood stopped").isTrue();
        String after = server.metricsText();
        List<Long> sorted = new ArrayList<>(nanos);
        Collections.sort(sorted);
        int n = sorted.size();
        return new Phase(n, seconds, refused.get(), timedOut.get(), quantileMs(sorted, 0.5), quantileMs(sorted, 0.99),
                delta(before, after, "apiserver_flowcontrol_rejected_requests_total", "priority_level=\"workload-low\""),
                delta(before, after, "apiserver_flowcontrol_dispatched_requests_total",
                        "priority_level=\"satoken-agent\""));
    }

    /** The {@code q} quantile of sorted nanoseconds, in ms; NaN when no request succeeded. */
    static double quantileMs(List<Long> sorted, double q) {
        return sorted.isEmpty() ? Double.NaN : sorted.get((int) Math.ceil(q * sorted.size()) - 1) / 1e6;
    }

    static double delta(String before, String after, String family, String... labels) {
        return PrometheusText.value(after, family, labels) - PrometheusText.value(before, family, labels);
    }

    /** {@value #NOISY_ACCOUNTS} ServiceAccounts {@code noisy-<i>} that may create ConfigMaps in a new namespace. */
    static String noisyAccounts(KubeApiServer server) throws ApiException {
        String ns = server.createNamespace("apf-noise");
        RbacAuthorizationV1Api rbac = new RbacAuthorizationV1Api(server.adminClient());
        rbac.createNamespacedRole(ns, new V1Role().metadata(new V1ObjectMeta().name("noise"))
                .rules(List.of(new V1PolicyRule().apiGroups(List.of("")).resources(List.of("configmaps"))
                        .verbs(List.of("create"))))).execute();
        List<RbacV1Subject> subjects = new ArrayList<>();
        for (int i = 0; i < NOISY_ACCOUNTS; i++) {
            server.createServiceAccount(ns, "noisy-" + i);
            subjects.add(new RbacV1Subject().kind("ServiceAccount").namespace(ns).name("noisy-" + i));
        }
        rbac.createNamespacedRoleBinding(ns, new V1RoleBinding().metadata(new V1ObjectMeta().name("noise"))
                .roleRef(new V1RoleRef().apiGroup("rbac.authorization.k8s.io").kind("Role").name("noise"))
                .subjects(subjects)).execute();
        return ns;
    }

    static void register(KubeApiServer server, SlowWebhook webhook, String noise) throws ApiException {
        new AdmissionregistrationV1Api(server.adminClient()).createValidatingWebhookConfiguration(
                new V1ValidatingWebhookConfiguration().metadata(new V1ObjectMeta().name("apf-e2e-slow"))
                        .webhooks(List.of(new V1ValidatingWebhook().name("slow.apf-e2e.satoken.io")
                                .clientConfig(new AdmissionregistrationV1WebhookClientConfig()
                                        .url("https://127.0.0.1:" + webhook.port() + "/")
                                        .caBundle(webhook.caBundle()))
                                .rules(List.of(new V1RuleWithOperations().apiGroups(List.of(""))
                                        .apiVersions(List.of("v1")).resources(List.of("configmaps"))
                                        .operations(List.of("CREATE"))))
                                .namespaceSelector(new V1LabelSelector().matchLabels(
                                        Map.of("kubernetes.io/metadata.name", noise)))
                                .failurePolicy("Ignore").sideEffects("None").timeoutSeconds(10)
                                .admissionReviewVersions(List.of("v1"))))).execute();
    }

    /** Waits until the API server calls the webhook: a ConfigMap create then takes its time. */
    static void awaitSlowWebhook(ApiClient client, String noise) throws Exception {
        CoreV1Api api = new CoreV1Api(client);
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        while (System.nanoTime() < deadline) {
            long start = System.nanoTime();
            api.createNamespacedConfigMap(noise, new V1ConfigMap().metadata(new V1ObjectMeta().generateName("probe-")))
                    .dryRun("All").execute();
            if (System.nanoTime() - start > TimeUnit.MILLISECONDS.toNanos(WEBHOOK_MILLIS / 2)) {
                return;
            }
            SatokenProcess.pause(Duration.ofMillis(200));
        }
        throw new AssertionError("the slow webhook was not called within 60 s");
    }

    /**
     * Creates the PriorityLevelConfiguration and the FlowSchema of {@link #FLOWCONTROL} as shipped; before 1.29
     * (no flowcontrol v1) as v1beta3, the same fields.
     */
    static void applyFlowControl(KubeApiServer server, int minor) throws Exception {
        String version = minor >= 29 ? "v1" : "v1beta3";
        Gson gson = new Gson();
        String text = Files.readString(FLOWCONTROL);
        for (Object doc : new Yaml(new SafeConstructor(new LoaderOptions())).loadAll(text)) {
            JsonObject object = gson.toJsonTree(doc).getAsJsonObject();
            assertThat(object.get("apiVersion").getAsString()).isEqualTo("flowcontrol.apiserver.k8s.io/v1");
            object.addProperty("apiVersion", "flowcontrol.apiserver.k8s.io/" + version);
            String plural = switch (object.get("kind").getAsString()) {
                case "PriorityLevelConfiguration" -> "prioritylevelconfigurations";
                case "FlowSchema" -> "flowschemas";
                default -> throw new IllegalStateException("unexpected kind in " + FLOWCONTROL);
            };
            new DynamicKubernetesApi("flowcontrol.apiserver.k8s.io", version, plural, server.adminClient())
                    .create(new DynamicKubernetesObject(object)).throwsApiException();
        }
        // the API server's APF configuration controller picks new objects up within seconds
        SatokenProcess.pause(Duration.ofSeconds(5));
    }

    /** An HTTPS admission webhook that allows every request after {@link #WEBHOOK_MILLIS} ms. */
    record SlowWebhook(HttpsServer server, ExecutorService threads, byte[] caBundle) implements AutoCloseable {

        static SlowWebhook start(Path tmp) throws Exception {
            TestCertificates.Pair pair = TestCertificates.write(tmp.resolve("slow-webhook"), "localhost");
            String pem = Files.readString(pair.key()).replaceAll("-----[A-Z ]+-----", "").replaceAll("\\s", "");
            PrivateKey key = KeyFactory.getInstance("EC").generatePrivate(
                    new PKCS8EncodedKeySpec(Base64.getDecoder().decode(pem)));
            KeyStore store = KeyStore.getInstance("PKCS12");
            store.load(null, null);
            store.setKeyEntry("tls", key, new char[0], new Certificate[] {pair.certificate()});
            KeyManagerFactory keys = KeyManagerFactory.getInstance(KeyManagerFactory.getDefaultAlgorithm());
            keys.init(store, new char[0]);
            SSLContext tls = SSLContext.getInstance("TLS");
            tls.init(keys.getKeyManagers(), null, null);
            HttpsServer server = HttpsServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 512);
            server.setHttpsConfigurator(new HttpsConfigurator(tls));
            ExecutorService threads = Executors.newCachedThreadPool();
            server.setExecutor(threads);
            Gson gson = new Gson();
            server.createContext("/", exchange -> {
                try (InputStream in = exchange.getRequestBody(); OutputStream out = exchange.getResponseBody()) {
                    JsonObject review = gson.fromJson(new String(in.readAllBytes(), StandardCharsets.UTF_8),
                            JsonObject.class);
                    String uid = review.getAsJsonObject("request").get("uid").getAsString();
                    Thread.sleep(WEBHOOK_MILLIS);
                    byte[] answer = ("{\"apiVersion\":\"admission.k8s.io/v1\",\"kind\":\"AdmissionReview\","
                            + "\"response\":{\"uid\":\"" + uid + "\",\"allowed\":true}}").getBytes(StandardCharsets.UTF_8);
                    exchange.getResponseHeaders().add("Content-Type", "application/json");
                    exchange.sendResponseHeaders(200, answer.length);
                    out.write(answer);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            });
            server.start();
            return new SlowWebhook(server, threads, pair.pem().getBytes(StandardCharsets.US_ASCII));
        }

        int port() {
            return server.getAddress().getPort();
        }

        @Override
        public void close() {
            server.stop(0);
            threads.shutdownNow();
        }
    }
}
