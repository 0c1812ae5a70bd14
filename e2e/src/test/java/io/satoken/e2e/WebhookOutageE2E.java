package io.satoken.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import io.kubernetes.client.openapi.ApiException;
import io.kubernetes.client.openapi.apis.AdmissionregistrationV1Api;
import io.kubernetes.client.openapi.apis.CoreV1Api;
import io.kubernetes.client.openapi.apis.VersionApi;
import io.kubernetes.client.openapi.models.V1ConfigMap;
import io.kubernetes.client.openapi.models.V1Container;
import io.kubernetes.client.openapi.models.V1Namespace;
import io.kubernetes.client.openapi.models.V1ObjectMeta;
import io.kubernetes.client.openapi.models.V1Pod;
import io.kubernetes.client.openapi.models.V1PodCondition;
import io.kubernetes.client.openapi.models.V1PodSpec;
import io.kubernetes.client.openapi.models.V1Secret;
import io.kubernetes.client.openapi.models.V1ServiceAccount;
import io.satoken.controlplane.testing.ApiServerClientCertificate;
import io.satoken.controlplane.testing.DeployedManifests;
import io.satoken.controlplane.webhook.TestCertificates;
import io.satoken.e2e.node.ClusterControllers;
import io.satoken.e2e.node.KubeletNode;
import io.satoken.e2e.node.TestImages;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.parallel.Execution;
import org.junit.jupiter.api.parallel.ExecutionMode;
import org.junit.jupiter.api.parallel.ResourceLock;

/**
 * The webhook Deployment as shipped ({@code controlplane/deploy}, two replicas, the built image) on a real node
 * with kube-controller-manager and kube-scheduler, and the registrations of {@code controlplane/deploy/webhooks}:
 * what a dead webhook stops, and that a rolling restart loses no pod creation.
 *
 * <p>The node has no kube-proxy, so the test plays its part, and nothing else changes in the Deployment but
 * {@code imagePullPolicy: Never} (the image is only in the node's containerd) and the controllers' Deployment
 * scaled to 0 (they are not under test; the test makes the ServiceAccounts they would):
 * <ul>
 *   <li>the {@code kubernetes} Service: the webhook's pods run on the pod network and reach the API server at its
 *       ClusterIP, 10.0.0.1:443, which the test adds to the host's loopback and relays to the API server;</li>
 *   <li>the webhook's Service: the registrations call {@code https://127.0.0.1:PORT}, a relay that sends each new
 *       connection to a pod that is Ready and not terminating, as the endpoints controller and kube-proxy would
 *       (the API server calls a Service's webhook through its ClusterIP the same way).</li>
 * </ul>
 * Both replicas run on the one node: the Deployment's topology spread (maxSkew 1 over hostnames, DoNotSchedule)
 * allows that where there is one node, and a rollout surges a third pod beside them.
 */
@Execution(ExecutionMode.CONCURRENT) // the node lock alone orders it; see junit-platform.properties
@ResourceLock(KubeletNode.RESOURCE)
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class WebhookOutageE2E {

    private static final String TEST = "WebhookOutageE2E";
    private static final String WEBHOOK_NAMESPACE = "satoken-webhook";
    private static final String SELECTOR = "app.kubernetes.io/name=satoken-webhook";
    private static final String SERVICE_IP = "10.0.0.1";
    private static final String NOWHERE = "no-such-node";
    private static final Duration ROLLOUT = Duration.ofSeconds(300);
    private static final String IMAGE = "controlplane/target/satoken-controlplane-image.tar";

    private static KubeletNode node;
    private static ClusterControllers controllers;
    private static Kubectl kubectl;
    private static Path work;
    private static CoreV1Api core;
    private static ServiceRelay apiRelay;
    private static ServiceRelay webhookRelay;
    private static boolean serviceIpAdded;
    private static TestCertificates.Pair tls;
    private static int serverMinor;
    private static String consumers;
    /** The webhook's pods the relay sends to: Ready and not terminating, as the endpoints controller lists them. */
    private static final AtomicReference<List<InetSocketAddress>> endpoints = new AtomicReference<>(List.of());
    private static final AtomicBoolean watching = new AtomicBoolean(true);

    @BeforeAll
    static void deploy() throws Exception {
        KubeletNode.assumeAvailable();
        skipUnless(ClusterControllers.unavailableReason());
        skipUnless(Kubectl.installed() ? Optional.empty() : Optional.of("kubectl not found on PATH"));
        skipUnless(Files.isRegularFile(E2E.repo().resolve(IMAGE)) ? Optional.empty()
                : Optional.of(IMAGE + " not built (mvn -B -q -DskipTests -Pimages package builds it)"));
        work = Files.createTempDirectory("satoken-webhook-outage-");
        ApiServerClientCertificate clientCertificate = ApiServerClientCertificate.write(work.resolve("client-auth"));
        node = KubeletNode.builder().apiServer(clientCertificate::presentedBy).start();
        node.importImage(E2E.repo().resolve(IMAGE));
        controllers = ClusterControllers.start(node.apiServer(), work);
        kubectl = Kubectl.forAdmin(node.apiServer());
        core = new CoreV1Api(node.adminClient());
        serverMinor = Integer.parseInt(new VersionApi(node.adminClient()).getCode().execute().getMinor()
                .replaceAll("\\D", ""));

        // the kubernetes Service's ClusterIP, on this host, relayed to the API server
        Commands.Result add = Commands.run("ip", List.of("ip", "addr", "add", SERVICE_IP + "/32", "dev", "lo"));
        assertThat(add.exit()).as("ip addr add %s/32 dev lo: %s", SERVICE_IP, add.output()).isZero();
        serviceIpAdded = true;
        int apiPort = Integer.parseInt(node.apiServer().url().replaceAll(".*:", ""));
        apiRelay = ServiceRelay.start("kubernetes", new InetSocketAddress(SERVICE_IP, 443),
                () -> List.of(new InetSocketAddress("127.0.0.1", apiPort)));

        // README, "Install": namespaces, the root CA (no controller publishes it here), the certificates
        kubectl("apply", "-f", E2E.repo().resolve("controlplane/deploy/00-namespace.yaml").toString());
        core.createNamespacedConfigMap(WEBHOOK_NAMESPACE, new V1ConfigMap().metadata(new V1ObjectMeta()
                .name("kube-root-ca.crt")).data(Map.of("ca.crt", Files.readString(node.apiServer().servingCertificate()))))
                .execute();
        core.createNamespacedConfigMap(WEBHOOK_NAMESPACE, new V1ConfigMap().metadata(new V1ObjectMeta()
                .name("satoken-webhook-client-ca")).data(Map.of("ca.crt", Files.readString(clientCertificate.ca().cert()))))
                .execute();
        tls = TestCertificates.write(work.resolve("webhook-tls"), "satoken-webhook");
        core.createNamespacedSecret(WEBHOOK_NAMESPACE, new V1Secret().metadata(new V1ObjectMeta()
                .name("satoken-webhook-tls")).type("kubernetes.io/tls")
                .data(Map.of("tls.crt", Files.readAllBytes(tls.cert()), "tls.key", Files.readAllBytes(tls.key()))))
                .execute();

        Path overlay = Files.createDirectories(E2E.repo().resolve("e2e/target/webhook-outage-overlay"));
        Files.writeString(overlay.resolve("kustomization.yaml"), """
                apiVersion: kustomize.config.k8s.io/v1beta1
                kind: Kustomization
                resources:
                  - ../../../controlplane/deploy
                patches:
                  - target: {kind: Deployment, name: satoken-webhook}
                    patch: '[{"op":"add","path":"/spec/template/spec/containers/0/imagePullPolicy","value":"Never"}]'
                  - target: {kind: Deployment, name: satoken-controlplane}
                    patch: '[{"op":"replace","path":"/spec/replicas","value":0}]'
                """);
        long started = System.nanoTime();
        kubectl("apply", "-k", overlay.toString());
        rollout();
        Figures.record(TEST, String.format(Locale.ROOT, "webhook Deployment (2 replicas) rolled out in %d s on"
                + " kube-apiserver 1.%d", Duration.ofNanos(System.nanoTime() - started).toSeconds(), serverMinor));

        Thread watcher = new Thread(WebhookOutageE2E::watchEndpoints, "webhook-endpoints");
        watcher.setDaemon(true);
        watcher.start();
        webhookRelay = ServiceRelay.start("satoken-webhook", new InetSocketAddress("127.0.0.1", 0), endpoints::get);
        Awaitility.await("both replicas as endpoints").atMost(Duration.ofSeconds(30))
                .until(() -> endpoints.get().size() == 2);
        DeployedManifests.registerWebhooks(node.adminClient(), E2E.repo().resolve("controlplane/deploy"),
                "https://127.0.0.1:" + webhookRelay.port(), Files.readAllBytes(tls.cert()));
        consumers = core.createNamespace(new V1Namespace().metadata(new V1ObjectMeta().generateName("consumers-")))
                .execute().getMetadata().getName();
        // the ServiceAccounts satoken's controllers would make
        for (String ns : List.of(consumers, "kube-system")) {
            core.createNamespacedServiceAccount(ns, new V1ServiceAccount().metadata(new V1ObjectMeta()
                    .name("default"))).execute();
        }
        // the API server picks the registrations up asynchronously: wait until a pod is mutated
        Awaitility.await("the pods webhook answers").atMost(Duration.ofSeconds(60)).ignoreExceptions()
                .until(() -> core.createNamespacedPod(consumers, pod("probe")).dryRun("All").execute().getSpec()
                        .getServiceAccountName() != null);
    }

    @AfterAll
    static void tearDown() throws Exception {
        watching.set(false);
        try {
            if (kubectl != null) {
                Commands.Result logs = kubectl.run("-n", WEBHOOK_NAMESPACE, "logs", "--all-containers", "--prefix",
                        "--tail=-1", "-l", SELECTOR);
                Files.writeString(E2E.newLog(TEST + "-webhook"), logs.output());
                // the registrations go first: without them nothing waits for the webhook
                new AdmissionregistrationV1Api(node.adminClient()).deleteMutatingWebhookConfiguration(
                        "satoken-controlplane").execute();
                new AdmissionregistrationV1Api(node.adminClient()).deleteValidatingWebhookConfiguration(
                        "satoken-controlplane").execute();
            }
        } catch (ApiException e) {
            System.err.println(TEST + ": " + e.getCode() + " " + e.getResponseBody());
        } finally {
            for (AutoCloseable c : new AutoCloseable[] {webhookRelay, controllers, node, apiRelay}) {
                if (c != null) {
                    try {
                        c.close();
                    } catch (Exception e) {
                        System.err.println(TEST + ": closing: " + e);
                    }
                }
            }
            if (serviceIpAdded) {
                Commands.run("ip", List.of("ip", "addr", "del", SERVICE_IP + "/32", "dev", "lo"));
            }
        }
    }

    /**
     * Every webhook pod deleted at once: until a replacement is Ready no pod can be created in an ordinary
     * namespace, while kube-system's pods are (their webhook fails open) and the webhook's own replacements are (its
     * namespace is skipped). Creations are attempted every 200 ms from the deletion until an ordinary one succeeds.
     */
    @Test
    @Order(1)
    void everyWebhookPodDeleted_kubeSystemAndTheWebhooksOwnPodsAreCreated_othersRefusedUntilAReplicaIsReady()
            throws Exception {
        Set<String> before = webhookPods().keySet();
        long deleted = System.nanoTime();
        kubectl("-n", WEBHOOK_NAMESPACE, "delete", "pods", "-l", SELECTOR, "--wait=false");
        Awaitility.await("no endpoint left").atMost(Duration.ofSeconds(10)).until(() -> endpoints.get().isEmpty());

        Map<String, Long> counts = new TreeMap<>();
        List<String> refusals = new ArrayList<>();
        Set<String> replacements = ConcurrentHashMap.newKeySet();
        long recovered = -1;
        boolean registrationsRemoved = false;
        int i = 0;
        while (recovered < 0) {
            long elapsed = System.nanoTime() - deleted;
            assertThat(Duration.ofNanos(elapsed)).as("the webhook back within 240 s").isLessThan(Duration.ofSeconds(240));
            if (serverMinor < 28 && !registrationsRemoved && Duration.ofNanos(elapsed).toSeconds() > 90) {
                // before 1.28 the token webhook also sees kubelet's TokenRequests, the replacements' own included:
                // the way out docs/install.md gives
                new AdmissionregistrationV1Api(node.adminClient()).deleteValidatingWebhookConfiguration(
                        "satoken-controlplane").execute();
                registrationsRemoved = true;
            }
            try {
                V1Pod created = core.createNamespacedPod("kube-system", pod("outage-" + i)).execute();
                // admitted by the webhook when it answered (a connection kept open to a draining replica, or once
                // one is back), else created without it
                counts.merge(created.getSpec().getServiceAccountName() == null
                        ? "kube-system created without admission" : "kube-system created, admitted", 1L, Long::sum);
            } catch (ApiException e) {
                counts.merge("kube-system refused", 1L, Long::sum);
                refusals.add("kube-system: " + e.getCode() + " " + e.getResponseBody());
            }
            try {
                core.createNamespacedPod(consumers, pod("outage-" + i)).execute();
                counts.merge("ordinary namespace created", 1L, Long::sum);
                recovered = System.nanoTime();
            } catch (ApiException e) {
                counts.merge("ordinary namespace refused", 1L, Long::sum);
                if (refusals.size() < 3) {
                    refusals.add(consumers + ": " + e.getCode() + " " + e.getResponseBody());
                }
            }
            webhookPods().keySet().stream().filter(p -> !before.contains(p)).forEach(replacements::add);
            i++;
            Thread.sleep(200); // the pace of the attempts, not a wait for a condition
        }
        Duration outage = Duration.ofNanos(recovered - deleted);
        String figure = String.format(Locale.ROOT, "every webhook pod deleted (kube-apiserver 1.%d): for %.1f s, "
                + "%s; %d replacement webhook pods created meanwhile%s", serverMinor, outage.toMillis() / 1000.0,
                counts, replacements.size(), registrationsRemoved
                        ? "; the token webhook's registration removed after 90 s, as its replacements could not get "
                        + "their ServiceAccount tokens (kubelet's TokenRequests, before 1.28 matchConditions)" : "");
        Figures.record(TEST, figure);
        System.err.println(TEST + ": " + figure + "\nfirst refusals: " + refusals);

        assertThat(counts.get("ordinary namespace refused")).as("refused while no replica was ready").isPositive();
        assertThat(refusals).filteredOn(r -> r.startsWith(consumers)).allSatisfy(r ->
                assertThat(r).contains("pods.serviceaccount.satoken.io"));
        assertThat(counts).as("kube-system's pods are never refused").doesNotContainKey("kube-system refused");
        assertThat(counts.get("kube-system created without admission")).as("created while no replica answered")
                .isPositive();
        assertThat(replacements).as("the webhook's own replacement pods, created while it was down").hasSizeGreaterThanOrEqualTo(2);
        if (registrationsRemoved) {
            rollout();
            registerAgain();
        }
        rollout();
    }

    /**
     * A rolling restart of the webhook Deployment under a steady stream of pod creations (one every 100 ms,
     * each waiting for its answer) loses none: a new replica is Ready for minReadySeconds before an old one is
     * stopped, and the stopped one drains.
     */
    @Test
    @Order(2)
    void rollingRestart_underASteadyStreamOfPodCreations_losesNone() throws Exception {
        Awaitility.await("both replicas as endpoints").atMost(Duration.ofSeconds(60))
                .until(() -> endpoints.get().size() == 2);
        AtomicBoolean creating = new AtomicBoolean(true);
        AtomicLong attempted = new AtomicLong();
        AtomicLong created = new AtomicLong();
        List<String> failures = new CopyOnWriteArrayList<>();
        Thread stream = new Thread(() -> {
            int n = 0;
            while (creating.get()) {
                attempted.incrementAndGet();
                try {
                    core.createNamespacedPod(consumers, pod("stream-" + n++)).execute();
                    created.incrementAndGet();
                } catch (ApiException e) {
                    failures.add(e.getCode() + " " + e.getResponseBody());
                }
                try {
                    Thread.sleep(100); // the stream's pace
                } catch (InterruptedException e) {
                    return;
                }
            }
        }, "pod-creations");
        Set<String> before = webhookPods().keySet();
        stream.start();
        long started = System.nanoTime();
        kubectl("-n", WEBHOOK_NAMESPACE, "rollout", "restart", "deployment/satoken-webhook");
        rollout();
        // the last old replica drains for 5 s after it is told to stop; keep creating until it has gone
        Awaitility.await("the old replicas gone").atMost(Duration.ofSeconds(60))
                .until(() -> webhookPods().keySet().stream().noneMatch(before::contains));
        Duration rolling = Duration.ofNanos(System.nanoTime() - started);
        creating.set(false);
        stream.join(10_000);

        String figure = String.format(Locale.ROOT, "rolling restart of the webhook Deployment (kube-apiserver 1.%d):"
                + " %d pod creations attempted during %.1f s, %d created, %d refused", serverMinor, attempted.get(),
                rolling.toMillis() / 1000.0, created.get(), failures.size());
        Figures.record(TEST, figure);
        System.err.println(TEST + ": " + figure + (failures.isEmpty() ? "" : "\nfailures: " + failures));
        assertThat(failures).as("creations refused during the rollout").isEmpty();
        assertThat(attempted.get()).as("creations attempted").isGreaterThan(100);
        assertThat(webhookPods()).as("the new replicas").hasSize(2);
    }

    // --- helpers ---------------------------------------------------------------------------------

    /** Polls the webhook's pods every 100 ms: the endpoints are those Ready and not terminating. */
    private static void watchEndpoints() {
        while (watching.get()) {
            try {
                List<InetSocketAddress> ready = new ArrayList<>();
                for (V1Pod p : core.listNamespacedPod(WEBHOOK_NAMESPACE).labelSelector(SELECTOR).execute().getItems()) {
                    if (p.getMetadata().getDeletionTimestamp() == null && p.getStatus() != null
                            && p.getStatus().getPodIP() != null && ready(p)) {
                        ready.add(new InetSocketAddress(p.getStatus().getPodIP(), 9443));
                    }
                }
                endpoints.set(List.copyOf(ready));
                Thread.sleep(100); // the poll's pace
            } catch (ApiException e) {
                // the next poll tries again
            } catch (InterruptedException e) {
                return;
            }
        }
    }

    private static boolean ready(V1Pod p) {
        List<V1PodCondition> conditions = p.getStatus().getConditions();
        return conditions != null && conditions.stream().anyMatch(c -> "Ready".equals(c.getType())
                && "True".equals(c.getStatus()));
    }

    /** The webhook's pods not being deleted, by name, with their phase. */
    private static Map<String, String> webhookPods() throws ApiException {
        Map<String, String> pods = new LinkedHashMap<>();
        for (V1Pod p : core.listNamespacedPod(WEBHOOK_NAMESPACE).labelSelector(SELECTOR).execute().getItems()) {
            if (p.getMetadata().getDeletionTimestamp() == null) {
                pods.put(p.getMetadata().getName(), p.getStatus() == null ? "" : p.getStatus().getPhase());
            }
        }
        return pods;
    }

    /** A pod bound to a node that does not exist: admitted and stored, never run. */
    private static V1Pod pod(String name) {
        return new V1Pod().metadata(new V1ObjectMeta().name(name)).spec(new V1PodSpec().nodeName(NOWHERE)
                .overhead(null).containers(List.of(new V1Container().name("main").image(TestImages.BUSYBOX))));
    }

    private static void registerAgain() throws Exception {
        new AdmissionregistrationV1Api(node.adminClient()).deleteMutatingWebhookConfiguration("satoken-controlplane")
                .execute();
        DeployedManifests.registerWebhooks(node.adminClient(), E2E.repo().resolve("controlplane/deploy"),
                "https://127.0.0.1:" + webhookRelay.port(), Files.readAllBytes(tls.cert()));
    }

    private static void rollout() throws Exception {
        Commands.Result r = kubectl.run("-n", WEBHOOK_NAMESPACE, "rollout", "status", "deployment/satoken-webhook",
                "--timeout=" + ROLLOUT.toSeconds() + "s");
        if (r.exit() != 0) {
            throw new AssertionError("rollout did not finish: " + r.output() + "\n"
                    + kubectl.run("-n", WEBHOOK_NAMESPACE, "describe", "pods").output());
        }
    }

    private static String kubectl(String... args) throws IOException, InterruptedException {
        Commands.Result r = kubectl.run(args);
        if (r.exit() != 0) {
            throw new AssertionError("kubectl " + String.join(" ", args) + " exited " + r.exit() + ":\n" + r.output());
        }
        return r.output();
    }

    private static void skipUnless(Optional<String> missing) {
        if (missing.isPresent()) {
            System.err.println("*** SKIPPED " + TEST + ": " + missing.get() + " ***");
            Assumptions.abort(missing.get());
        }
    }
}
