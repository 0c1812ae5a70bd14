package io.satoken.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import io.kubernetes.client.openapi.ApiException;
import io.kubernetes.client.openapi.apis.CoreV1Api;
import io.kubernetes.client.openapi.models.AuthenticationV1TokenRequest;
import io.kubernetes.client.openapi.models.V1BoundObjectReference;
import io.kubernetes.client.openapi.models.V1DeleteOptions;
import io.kubernetes.client.openapi.models.V1Namespace;
import io.kubernetes.client.openapi.models.V1ObjectMeta;
import io.kubernetes.client.openapi.models.V1Pod;
import io.kubernetes.client.openapi.models.V1TokenRequestSpec;
import io.satoken.common.testing.KubeApiServer;
import io.satoken.common.testing.RequiresKubeApiServer;
import io.satoken.controlplane.webhook.ReviewMemory;
import io.satoken.controlplane.webhook.TestCertificates;
import io.satoken.controlplane.testing.ApiServerClientCertificate;
import java.io.IOException;
import java.io.OutputStream;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import javax.net.ssl.SSLSocket;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The attacks of the security review, each against the project's own manifests: the control plane's RBAC,
 * Deployments and webhook configurations from {@code controlplane/deploy} (each Deployment run as a local
 * process with its own args and ServiceAccount, {@link DeployedControlplane}; the webhook configurations
 * changed only to reach it by URL), the agent's RBAC from {@code agent/deploy}, and a real kube-apiserver that
 * presents the client certificate the webhook Deployment requires ({@link ApiServerClientCertificate}). Attacks on
 * the webhook itself come from a client holding a certificate of the same CA ({@link #intruder}), the worst case
 * the manifests allow; one without a certificate does not get past the handshake.
 * Each test records what it tried and what happened ({@code e2e/target/reliability/security-*.txt}), which
 * RELIABILITY.md's Security table reports.
 */
@RequiresKubeApiServer
class SecurityE2E {

    static final String NODE = "node-a";
    static final Duration WAIT = Duration.ofSeconds(60);
    static final int STALLED_CLIENTS = 64;
    static final int FORGED_REVIEWS = 1_000;
    static final int REAL_REVIEWS = 200;
    static final int SEVEN_MIB = 7 * 1024 * 1024;

    static KubeApiServer server;
    static CoreV1Api admin;
    static Path work;
    static DeployedControlplane.Started controllers;
    static DeployedControlplane.Started webhook;
    static SatokenProcess agent;
    static String agentMetrics;
    static String agentToken;
    static String namespace;
    static String webhookCa;
    /** The API server's client certificate for the webhook, which the deployed webhook requires. */
    static ApiServerClientCertificate clientAuth;
    /**
     * A certificate the same CA signs for someone other than the API server (a node's, where the operator uses a
     * CA that signs more than the API server's): a client the webhook lets past its handshake, counted apart.
     */
    static TestCertificates.Pair intruder;

    @BeforeAll
    static void deploy() throws Exception {
        work = Files.createTempDirectory("satoken-e2e-security-");
        clientAuth = ApiServerClientCertificate.write(work.resolve("client-auth"));
        intruder = clientAuth.another(work.resolve("intruder"), "system:node:" + NODE);
        server = clientAuth.presentedBy(KubeApiServer.builder()).build().start();
        admin = new CoreV1Api(server.adminClient());
        Kubectl kubectl = Kubectl.forAdmin(server);
        DeployedControlplane.applyNamespacesAndRbac(kubectl);
        TestCertificates.Pair tls = TestCertificates.write(work.resolve("webhook-tls"), "satoken-webhook");
        webhookCa = Files.readString(tls.cert());
        DeployedControlplane.Running running = DeployedControlplane.startAll("security", server, work,
                DeployedControlplane.mountedFiles(tls, clientAuth, server.serviceAccountSigningKey()), server.servingCertificate(),
                webhookCa.getBytes(StandardCharsets.US_ASCII), WAIT);
        controllers = running.controllers();
        webhook = running.webhook();

        kubectl.apply(E2E.repo().resolve("agent/deploy/00-namespace.yaml"));
        kubectl.apply(E2E.repo().resolve("agent/deploy/identity/serviceaccount.yaml"));
        kubectl.apply(E2E.repo().resolve("agent/deploy/10-rbac.yaml"));
        agentToken = AgentIdentity.podBoundToken(server, NODE);
        agentMetrics = "127.0.0.1:" + E2E.freePort();
        agent = CsiAgentSetup.withToken(server, work, NODE, agentToken).launch("security-agent", agentMetrics);

        namespace = "security";
        admin.createNamespace(new V1Namespace().metadata(new V1ObjectMeta().name(namespace))).execute();
        awaitDefaultServiceAccount(namespace);
    }

    @AfterAll
    static void undeploy() {
        if (agent != null) {
            agent.stop();
        }
        if (webhook != null && webhook != controllers) {
            webhook.process().stop();
        }
        if (controllers != null) {
            controllers.process().stop();
        }
        E2E.closeKeepingLogs(server, "security");
        if (work != null) {
            MemoryDirs.delete(work); // kubeconfigs hold tokens
        }
    }

    // --- token confinement: the agent's identity -----------------------------------------------------

    /** Finding 1: the control plane's namespace is no exemption; an unbound token for its account is refused. */
    @Test
    void agentIdentity_cannotMintAnUnboundToken_forTheControlPlanesServiceAccount() throws Exception {
        List<String> refused = new ArrayList<>();
        for (DeployedControlplane.Workload w : DeployedControlplane.workloads()) {
            ApiException e = mintAsAgent(w.namespace(), w.serviceAccount(), new V1TokenRequestSpec()
                    .expirationSeconds(3600L));
            assertThat(e).as("an unbound token for %s/%s minted with the agent's identity", w.namespace(),
                    w.serviceAccount()).isNotNull();
            assertThat(e.getCode()).isEqualTo(403);
            assertThat(e.getResponseBody()).contains("boundObjectRef");
            refused.add(w.namespace() + "/" + w.serviceAccount() + ": " + e.getCode());
        }
        Figures.record("security-namespace-exemption", "agent identity asked for an unbound token for each"
                + " control-plane ServiceAccount: " + refused);
    }

    /** Finding 2: a pod-bound request must name the pod's uid, so it cannot land on a pod recreated meanwhile. */
    @Test
    void agentIdentity_cannotMintWithoutTheBoundPodsUid() throws Exception {
        V1Pod here = admin.createNamespacedPod(namespace, WholeFlowE2E.annotated("no-uid", NODE)).execute();
        ApiException e = mintAsAgent(namespace, "default", spec(here).boundObjectRef(boundRef(here).uid(null)));
        assertThat(e).as("a token bound to a pod by name only").isNotNull();
        assertThat(e.getCode()).isEqualTo(403);
        assertThat(e.getResponseBody()).contains("boundObjectRef.uid");
        Figures.record("security-uid-less", "agent identity, pod on its own node, boundObjectRef without uid: "
                + e.getCode());
    }

    /**
     * Finding 2: a pod deleted and recreated under the same name on another node. The uid of the pod the
     * agent saw no longer names a live pod, and the new pod is not on the agent's node.
     */
    @Test
    void agentIdentity_cannotMintForARecreatedPod_withTheOldUid_orTheNewOne() throws Exception {
        V1Pod first = admin.createNamespacedPod(namespace, WholeFlowE2E.annotated("recreated", NODE)).execute();
        String granted = IssuedTokens.record(new CoreV1Api(server.clientFor(agentToken))
                .createNamespacedServiceAccountToken("default", namespace,
                        new AuthenticationV1TokenRequest().spec(spec(first))).execute().getStatus().getToken());
        assertThat(granted).as("the token for the pod while it is on the agent's node").isNotBlank();
        admin.deleteNamespacedPod("recreated", namespace).gracePeriodSeconds(0)
                .body(new V1DeleteOptions().gracePeriodSeconds(0L)).execute();
        V1Pod second = admin.createNamespacedPod(namespace, WholeFlowE2E.annotated("recreated", "node-b")).execute();
        assertThat(second.getMetadata().getUid()).isNotEqualTo(first.getMetadata().getUid());

        ApiException oldUid = mintAsAgent(namespace, "default", spec(first));
        ApiException newUid = mintAsAgent(namespace, "default", spec(second));
        assertThat(oldUid).as("a token for the deleted pod's uid").isNotNull();
        assertThat(oldUid.getCode()).isEqualTo(403);
        assertThat(newUid).as("a token for the new pod on node-b").isNotNull();
        assertThat(newUid.getCode()).isEqualTo(403);
        assertThat(newUid.getResponseBody()).contains("node-b");
        Figures.record("security-recreated-pod", "pod recreated on node-b under the same name: old uid "
                + oldUid.getCode() + ", new uid " + newUid.getCode());
    }

    /** Confinement to what the pod's own volumes ask for: another audience or lifetime is refused. */
    @Test
    void agentIdentity_cannotMintAnAudienceOrLifetime_thePodsVolumesDoNotAskFor() throws Exception {
        V1Pod here = admin.createNamespacedPod(namespace, WholeFlowE2E.annotated("audience", NODE)).execute();
        ApiException audience = mintAsAgent(namespace, "default", spec(here).audiences(List.of("api")));
        ApiException lifetime = mintAsAgent(namespace, "default", spec(here).expirationSeconds(86_400L));
        String ok = IssuedTokens.record(new CoreV1Api(server.clientFor(agentToken))
                .createNamespacedServiceAccountToken("default", namespace,
                        new AuthenticationV1TokenRequest().spec(spec(here))).execute().getStatus().getToken());
        assertThat(audience).as("a token for an audience the pod's volumes do not name").isNotNull();
        assertThat(audience.getCode()).isEqualTo(403);
        assertThat(lifetime).as("a token for a lifetime the pod's volumes do not ask for").isNotNull();
        assertThat(lifetime.getCode()).isEqualTo(403);
        assertThat(ok).as("the token its volume asks for").isNotBlank();
        Figures.record("security-audience", "pod asking for vault/3600 s: audience api " + audience.getCode()
                + ", lifetime 86400 s " + lifetime.getCode() + ", vault/3600 s granted");
    }

    // --- endpoints under hostile clients ------------------------------------------------------------

    /** Finding 4: silent TCP connections to the health port of every process never block its probe. */
    @Test
    void stalledClients_neverBlockHealthz_onAnyProcess() throws Exception {
        long deadline = System.nanoTime() + WAIT.toNanos();
        while (agent.healthz() != 200 && System.nanoTime() < deadline) {
            SatokenProcess.pause(Duration.ofMillis(200));
        }
        List<String> figures = new ArrayList<>();
        for (var target : List.of(Map.entry("controllers", controllers.address("--metrics-address")),
                Map.entry("webhook", webhook.address("--metrics-address")), Map.entry("agent", agentMetrics))) {
            List<Socket> stalled = new ArrayList<>();
            try {
                for (int i = 0; i < STALLED_CLIENTS; i++) {
                    Socket s = connect(target.getValue());
                    if (i % 2 == 1) { // half send the start of a request and stop
                        OutputStream out = s.getOutputStream();
                        out.write("GET /healthz HTTP/1.1\r\nHost: x\r\n".getBytes(StandardCharsets.US_ASCII));
                        out.flush();
                    }
                    stalled.add(s);
                }
                long worst = 0;
                for (int i = 0; i < 5; i++) {
                    long start = System.nanoTime();
                    int status = healthz(target.getValue(), Duration.ofSeconds(3));
                    long ms = (System.nanoTime() - start) / 1_000_000;
                    worst = Math.max(worst, ms);
                    assertThat(status).as("%s /healthz with %d stalled connections open", target.getKey(),
                            STALLED_CLIENTS).isEqualTo(200);
                }
                figures.add(target.getKey() + " 5 of 5 answered 200, slowest " + worst + " ms");
            } finally {
                for (Socket s : stalled) {
                    s.close();
                }
            }
        }
        Figures.record("security-stalled-healthz", STALLED_CLIENTS + " silent or half-sent connections per"
                + " process: " + String.join("; ", figures));
    }

    /** Finding 4: an oversized body and a slow one are refused, and reviews go on being answered. */
    @Test
    void oversizedAndSlowBodies_areRefused_whileReviewsAreStillAnswered() throws Exception {
        WebhookClient client = intruder();
        String huge = "x".repeat(8 * 1024 * 1024);
        WebhookClient.Answer oversized = client.post(BadReviews.MUTATE, huge);
        ExecutorService slow = Executors.newSingleThreadExecutor();
        try {
            Future<String> trickled = slow.submit(() -> client.stall("POST " + BadReviews.MUTATE
                    + " HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{"));
            long start = System.nanoTime();
            WebhookClient.Answer meanwhile = client.post(BadReviews.MUTATE,
                    BadReviews.review("ok-1", namespace, BadReviews.pod(null)));
            long meanwhileMs = (System.nanoTime() - start) / 1_000_000;
            String slowAnswer = trickled.get(60, java.util.concurrent.TimeUnit.SECONDS);
            assertThat(oversized.status()).as("an 8 MiB body").isEqualTo(413);
            assertThat(slowAnswer).as("a body that never arrives").startsWith("HTTP/1.1 408");
            assertThat(meanwhile.status()).isEqualTo(200);
            assertThat(meanwhile.allowed()).as("a valid review while the slow one waits").isTrue();
            Figures.record("security-bodies", "8 MiB body: " + oversized.status() + "; a body that stops after"
                    + " 1 of 1000 bytes: " + slowAnswer.lines().findFirst().orElse("") + "; a valid review meanwhile"
                    + " answered in " + meanwhileMs + " ms");
        } finally {
            slow.shutdownNow();
        }
    }

    /**
     * Finding 4: forged reviews for ServiceAccounts that do not exist (the {@code default} of namespaces
     * that have none, which AD-4 re-reads for a while) neither hold the workers nor block a real review.
     */
    @Test
    void thousandForgedReviews_forMissingServiceAccounts_doNotHoldTheWebhook() throws Exception {
        WebhookClient client = intruder();
        ExecutorService attackers = Executors.newFixedThreadPool(32);
        long[] millis = new long[FORGED_REVIEWS];
        int[] codes = new int[FORGED_REVIEWS];
        long start = System.nanoTime();
        try {
            List<Future<?>> sent = new ArrayList<>();
            for (int i = 0; i < FORGED_REVIEWS; i++) {
                int n = i;
                sent.add(attackers.submit(() -> {
                    long t = System.nanoTime();
                    WebhookClient.Answer a = client.post(BadReviews.MUTATE,
                            BadReviews.review("forged-" + n, "forged-" + (n % 10), BadReviews.pod(null)));
                    millis[n] = (System.nanoTime() - t) / 1_000_000;
                    codes[n] = a.allowed() ? 200 : a.code();
                    return null;
                }));
            }
            long realStart = System.nanoTime();
            WebhookClient.Answer real = client.post(BadReviews.MUTATE,
                    BadReviews.review("real", namespace, BadReviews.pod(null)));
            long realMs = (System.nanoTime() - realStart) / 1_000_000;
            int health = healthz(webhook.address("--metrics-address"), Duration.ofSeconds(3));
            for (Future<?> f : sent) {
                f.get(120, java.util.concurrent.TimeUnit.SECONDS);
            }
            long totalMs = (System.nanoTime() - start) / 1_000_000;
            long[] sorted = millis.clone();
            Arrays.sort(sorted);
            long p99 = sorted[FORGED_REVIEWS * 99 / 100 - 1];
            Figures.record("security-forged-reviews", String.format("%d reviews for the missing default"
                    + " ServiceAccount of 10 missing namespaces, 32 at a time: all answered in %d ms, p50 %d ms,"
                    + " p99 %d ms, max %d ms, codes %s; a real review meanwhile answered in %d ms (allowed %s),"
                    + " /healthz %d", FORGED_REVIEWS, totalMs, sorted[FORGED_REVIEWS / 2], p99,
                    sorted[FORGED_REVIEWS - 1], Arrays.stream(codes).distinct().boxed().toList(), realMs,
                    real.allowed(), health));
            assertThat(codes).as("every forged review denied as upstream denies a missing account").containsOnly(403);
            assertThat(real.allowed()).as("a real review during the flood").isTrue();
            assertThat(health).isEqualTo(200);
            assertThat(totalMs).as("1,000 forged reviews answered within 20 s").isLessThan(20_000);
        } finally {
            attackers.shutdownNow();
        }
    }

    // --- a webhook no client can exhaust ----------------------------------------------------------------

    /**
     * The manifests' default: the webhook's handshake requires a client certificate from the API server's CA, so a
     * pod (anything without one) cannot send it a review at all, while the API server's own calls are served.
     */
    @Test
    void clientWithoutACertificate_refusedInTheHandshake_theApiServersCallsServed() throws Exception {
        WebhookClient anyone = new WebhookClient(webhook.port("--webhook-address"), webhookCa);

        Exception refused = null;
        try {
            anyone.post(BadReviews.MUTATE, BadReviews.review("no-cert", namespace, BadReviews.pod(null)));
        } catch (IOException e) {
            refused = e;
        }
        V1Pod admitted = admin.createNamespacedPod(namespace, realPod("handshake")).dryRun("All").execute();

        assertThat(refused).as("a review from a client without a certificate").isNotNull();
        assertThat(admitted.getSpec().getVolumes()).as("the API server's call, served: the token volume added")
                .anyMatch(v -> v.getName().startsWith("kube-api-access-"));
        Figures.record("security-client-certificate", "a client without a certificate: " + refused
                + "; the API server's review of a pod: served (kube-api-access volume added)");
    }

    /**
     * Five senders announcing 7 MiB bodies and trickling them, over and over, from one client with a certificate:
     * they hold at most that client's share of the body budget, each only until it falls behind the body pace
     * (408), and the API server's reviews keep their pace.
     */
    @Test
    void fiveSlowSenders_ofSevenMiB_whileTheApiServerReviewsPods() throws Exception {
        WebhookClient client = intruder();
        String head = "POST " + BadReviews.MUTATE + " HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                + "Content-Length: " + SEVEN_MIB + "\r\n\r\n{";
        underAttack("security-attack-slow-senders", "5 senders announcing 7 MiB, trickling 1 KiB/s", 5, stop -> {
            try (SSLSocket socket = client.open(head)) {
                OutputStream out = socket.getOutputStream();
                byte[] kib = " ".repeat(1024).getBytes(StandardCharsets.US_ASCII);
                try {
                    while (!stop.get() && socket.getInputStream().available() == 0) {
                        out.write(kib);
                        out.flush();
                        SatokenProcess.pause(Duration.ofSeconds(1));
                    }
                } catch (IOException cut) {
                    // the server closed the connection after its answer
                }
                return statusLine(socket);
            }
        });
    }

    /**
     * Four 7 MiB bodies at once, over and over, of empty lists nested where no rule reads (which Gson once kept at
     * 14.8 times the body) and where a rule keeps the value whole (refused as an amplification).
     */
    @Test
    void fourNestedListBodies_atOnce_whileTheApiServerReviewsPods() throws Exception {
        WebhookClient client = intruder();
        String skipped = new String(ReviewMemory.nestedLists("{\"kind\":\"Pod\",\"spec\":{\"affinity\":$}}"),
                StandardCharsets.US_ASCII);
        String kept = new String(ReviewMemory.nestedLists(
                "{\"kind\":\"Pod\",\"spec\":{\"volumes\":[{\"name\":\"v\",\"csi\":{\"x\":$}}]}}"),
                StandardCharsets.US_ASCII);
        AtomicInteger turn = new AtomicInteger();
        underAttack("security-attack-nested-lists", "4 bodies of 7 MiB of nested empty lists at once, in "
                + "spec.affinity and spec.volumes[0].csi by turns", 4, stop -> {
            WebhookClient.Answer a = client.post(BadReviews.MUTATE, turn.getAndIncrement() % 2 == 0 ? skipped : kept);
            return a.status() + (a.response() == null ? "" : a.allowed() ? " allowed" : " " + a.code());
        });
    }

    /** Forged reviews for the missing {@code default} of a fresh namespace each, 32 at a time. */
    @Test
    void forgedReviewFlood_freshMissingNamespaces_whileTheApiServerReviewsPods() throws Exception {
        WebhookClient client = intruder();
        AtomicInteger fresh = new AtomicInteger();
        underAttack("security-attack-namespace-flood", "32 senders of forged reviews, each for the missing default "
                + "ServiceAccount of a namespace never named before", 32, stop -> {
            int n = fresh.incrementAndGet();
            WebhookClient.Answer a = client.post(BadReviews.MUTATE,
                    BadReviews.review("flood-" + n, "fresh-" + n, BadReviews.pod(null)));
            return a.status() + (a.response() == null ? "" : a.allowed() ? " allowed" : " " + a.code());
        });
    }

    /** One attacker's request: what it got (a status line or code), ending early once {@code stop} is set. */
    @FunctionalInterface
    interface Attack {
        String send(AtomicBoolean stop) throws Exception;
    }

    /**
     * Runs {@code attack} on {@code senders} threads, each sending again as soon as answered, while the API server
     * reviews {@value #REAL_REVIEWS} pods (dry-run creations, 10 a second and at most 4 at a time, each calling the
     * webhook); then asserts
     * every real review was allowed with a p99 under the webhook's 10 s timeout, and records both sides.
     */
    private static void underAttack(String figure, String what, int senders, Attack attack) throws Exception {
        AtomicBoolean stop = new AtomicBoolean();
        Map<String, AtomicInteger> answers = new java.util.concurrent.ConcurrentSkipListMap<>();
        ExecutorService attackers = Executors.newFixedThreadPool(senders);
        List<Future<?>> running = new ArrayList<>();
        for (int i = 0; i < senders; i++) {
            running.add(attackers.submit(() -> {
                while (!stop.get()) {
                    String answer;
                    try {
                        answer = attack.send(stop);
                    } catch (Exception e) {
                        answer = e.getClass().getSimpleName();
                    }
                    answers.computeIfAbsent(answer, k -> new AtomicInteger()).incrementAndGet();
                }
                return null;
            }));
        }
        // 10 reviews a second, at most 4 at a time: 20 s of attack at least
        java.util.concurrent.ScheduledExecutorService reviewers = Executors.newScheduledThreadPool(4);
        long[] millis = new long[REAL_REVIEWS];
        String[] failures = new String[REAL_REVIEWS];
        long start = System.nanoTime();
        try {
            SatokenProcess.pause(Duration.ofSeconds(2)); // the attack under way first
            List<Future<?>> reviews = new ArrayList<>();
            for (int i = 0; i < REAL_REVIEWS; i++) {
                int n = i;
                reviews.add(reviewers.schedule(() -> {
                    long t = System.nanoTime();
                    try {
                        V1Pod pod = admin.createNamespacedPod(namespace, realPod("real-" + n)).dryRun("All").execute();
                        if (pod.getSpec().getVolumes().stream().noneMatch(v -> v.getName().startsWith("kube-api-access-"))) {
                            failures[n] = "admitted without the webhook's token volume";
                        }
                    } catch (ApiException e) {
                        failures[n] = e.getCode() + " " + e.getResponseBody();
                    }
                    millis[n] = (System.nanoTime() - t) / 1_000_000;
                    return null;
                }, n * 100L, java.util.concurrent.TimeUnit.MILLISECONDS));
            }
            for (Future<?> f : reviews) {
                f.get(10, java.util.concurrent.TimeUnit.MINUTES);
            }
        } finally {
            stop.set(true);
            reviewers.shutdownNow();
            for (Future<?> f : running) {
                try {
                    f.get(60, java.util.concurrent.TimeUnit.SECONDS);
                } catch (java.util.concurrent.ExecutionException | java.util.concurrent.TimeoutException e) {
                    // an attacker stuck past the test is stopped below
                }
            }
            attackers.shutdownNow();
        }
        long seconds = (System.nanoTime() - start) / 1_000_000_000;
        long[] sorted = millis.clone();
        Arrays.sort(sorted);
        long p99 = sorted[(int) Math.ceil(REAL_REVIEWS * 0.99) - 1];
        List<String> failed = Arrays.stream(failures).filter(java.util.Objects::nonNull).toList();
        int health = healthz(webhook.address("--metrics-address"), Duration.ofSeconds(3));
        Figures.record(figure, String.format("%s, for %d s: attackers got %s; meanwhile %d real reviews (pods created"
                + " with dryRun through the API server, 10 a second, at most 4 at a time): %d failed, p50 %d ms, p99 %d ms, max %d ms;"
                + " /healthz %d", what, seconds, answers, REAL_REVIEWS, failed.size(), sorted[REAL_REVIEWS / 2], p99,
                sorted[REAL_REVIEWS - 1], health));
        assertThat(failed).as("real reviews during the attack").isEmpty();
        assertThat(p99).as("p99 of real reviews during the attack, against the webhook's 10 s timeout")
                .isLessThan(10_000);
        assertThat(health).isEqualTo(200);
    }

    /** A pod the API server reviews for real: the webhook adds its token volume. */
    private static V1Pod realPod(String name) {
        return new V1Pod().metadata(new V1ObjectMeta().name(name)).spec(new io.kubernetes.client.openapi.models.V1PodSpec()
                .containers(List.of(new io.kubernetes.client.openapi.models.V1Container().name("main").image("busybox"))));
    }

    /** The status line of the answer on {@code socket}, or what ended the read. */
    private static String statusLine(SSLSocket socket) {
        try {
            StringBuilder line = new StringBuilder();
            for (int c = socket.getInputStream().read(); c >= 0 && c != '\r'; c = socket.getInputStream().read()) {
                line.append((char) c);
            }
            return line.length() == 0 ? "closed without an answer" : line.toString();
        } catch (IOException e) {
            return e.getClass().getSimpleName();
        }
    }

    /** A client of the webhook holding {@link #intruder}'s certificate. */
    private static WebhookClient intruder() throws Exception {
        return new WebhookClient(webhook.port("--webhook-address"), webhookCa, intruder);
    }

    // --- helpers ------------------------------------------------------------------------------------

    private static ApiException mintAsAgent(String ns, String account, V1TokenRequestSpec spec) {
        try {
            IssuedTokens.record(new CoreV1Api(server.clientFor(agentToken)).createNamespacedServiceAccountToken(
                    account, ns, new AuthenticationV1TokenRequest().spec(spec)).execute().getStatus().getToken());
            return null;
        } catch (ApiException e) {
            return e;
        }
    }

    /** What the pod's injected volume asks for ({@link WholeFlowE2E#annotated}): vault, 3600 s. */
    private static V1TokenRequestSpec spec(V1Pod pod) {
        return new V1TokenRequestSpec().audiences(List.of("vault")).expirationSeconds(3600L).boundObjectRef(boundRef(pod));
    }

    private static V1BoundObjectReference boundRef(V1Pod pod) {
        return new V1BoundObjectReference().kind("Pod").apiVersion("v1").name(pod.getMetadata().getName())
                .uid(pod.getMetadata().getUid());
    }

    private static Socket connect(String address) throws IOException {
        int colon = address.lastIndexOf(':');
        Socket s = new Socket(address.substring(0, colon), Integer.parseInt(address.substring(colon + 1)));
        s.setSoTimeout(1_000);
        return s;
    }

    private static int healthz(String address, Duration timeout) throws InterruptedException {
        try {
            HttpClient http = HttpClient.newBuilder().connectTimeout(timeout).build();
            return http.send(HttpRequest.newBuilder(URI.create("http://" + address + "/healthz")).timeout(timeout)
                    .build(), HttpResponse.BodyHandlers.discarding()).statusCode();
        } catch (IOException e) {
            return -1; // timed out or refused
        }
    }

    private static void awaitDefaultServiceAccount(String ns) throws Exception {
        long deadline = System.nanoTime() + WAIT.toNanos();
        while (true) {
            try {
                admin.readNamespacedServiceAccount("default", ns).execute();
                return;
            } catch (ApiException e) {
                if (e.getCode() != 404 || System.nanoTime() > deadline) {
                    throw e;
                }
            }
            SatokenProcess.pause(Duration.ofMillis(200));
        }
    }
}
