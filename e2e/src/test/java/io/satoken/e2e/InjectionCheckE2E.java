package io.satoken.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import io.kubernetes.client.openapi.ApiException;
import io.kubernetes.client.openapi.apis.AppsV1Api;
import io.kubernetes.client.openapi.apis.CoreV1Api;
import io.kubernetes.client.openapi.models.CoreV1Event;
import io.kubernetes.client.openapi.models.V1Container;
import io.kubernetes.client.openapi.models.V1LabelSelector;
import io.kubernetes.client.openapi.models.V1ObjectMeta;
import io.kubernetes.client.openapi.models.V1Pod;
import io.kubernetes.client.openapi.models.V1PodSpec;
import io.kubernetes.client.openapi.models.V1PodTemplateSpec;
import io.kubernetes.client.openapi.models.V1ReplicaSet;
import io.kubernetes.client.openapi.models.V1ReplicaSetSpec;
import io.kubernetes.client.openapi.models.V1Volume;
import io.satoken.common.testing.KubeApiServer;
import io.satoken.common.testing.RequiresKubeApiServer;
import io.satoken.controlplane.webhook.TestCertificates;
import io.satoken.controlplane.testing.ApiServerClientCertificate;
import io.satoken.controlplane.testing.DeployedManifests;
import io.satoken.e2e.node.ClusterControllers;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;

/**
 * The injection check against a real API server and kube-controller-manager's ReplicaSet controller, the control
 * plane run as its Deployments with the Components {@code injection-check/} and {@code injection-check-delete/}:
 * (a) with no webhook registered (as when it is down under failurePolicy Ignore, or not yet registered), a
 * ReplicaSet's pod and a bare pod that ask for satoken tokens are created without the token volume; the check finds
 * both (a Warning Event each, {@code satoken_pods_missing_injection} 2); (b) with the webhook registered and the
 * check allowed to evict, the ReplicaSet's pod (its template asks for tokens) is evicted and comes back through the
 * webhook with the volume, while the bare pod is left alone. No kubelet: the pods need not run.
 */
@RequiresKubeApiServer
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class InjectionCheckE2E {

    private static final String TEST = "InjectionCheckE2E";
    private static final Duration WAIT = Duration.ofSeconds(60);
    private static final String ANNOTATION = "satoken.io/projections";

    private static Path work;
    private static KubeApiServer server;
    private static ClusterControllers kcm;
    private static SatokenProcess controllers;
    private static SatokenProcess webhook;
    private static String webhookUrl;
    private static byte[] caBundle;
    private static Map<String, Path> files;
    private static String namespace;
    private static CoreV1Api core;

    @BeforeAll
    static void start() throws Exception {
        Optional<String> missing = ClusterControllers.unavailableReason();
        if (missing.isPresent()) {
            System.err.println("*** SKIPPED " + TEST + ": " + missing.get() + " ***");
            Assumptions.abort(missing.get());
        }
        work = Files.createTempDirectory("satoken-e2e-injection-");
        ApiServerClientCertificate clientCertificate = ApiServerClientCertificate.write(work.resolve("client-auth"));
        server = clientCertificate.presentedBy(KubeApiServer.builder()).build().start();
        core = new CoreV1Api(server.adminClient());
        Kubectl kubectl = Kubectl.forAdmin(server);
        DeployedControlplane.applyNamespacesAndRbac(kubectl);
        kubectl.apply(DeployedControlplane.DEPLOY.resolve("injection-check/rbac.yaml"));
        kubectl.apply(DeployedControlplane.DEPLOY.resolve("injection-check-delete/rbac.yaml"));
        TestCertificates.Pair tls = TestCertificates.write(work.resolve("webhook-tls"), "satoken-webhook");
        caBundle = Files.readAllBytes(tls.cert());
        files = DeployedControlplane.mountedFiles(tls, clientCertificate, work.resolve("no-signing-key"));
        DeployedControlplane.Started hook = DeployedControlplane.start("injection", server,
                DeployedControlplane.webhook(), work, files, server.servingCertificate());
        webhook = hook.process();
        webhookUrl = "https://127.0.0.1:" + hook.port("--webhook-address");
        webhook.awaitReady(WAIT);
        controllers = startControllers("injection-check", false);
        kcm = ClusterControllers.start(server, work);
        namespace = server.createNamespace("inj");
        awaitTrue("the default ServiceAccount", WAIT, () -> exists(() -> core.readNamespacedServiceAccount("default",
                namespace).execute()));
    }

    @AfterAll
    static void stop() {
        if (kcm != null) {
            kcm.close();
        }
        for (SatokenProcess p : new SatokenProcess[] {controllers, webhook}) {
            if (p != null) {
                p.close();
            }
        }
        E2E.closeKeepingLogs(server, "injection");
        if (work != null) {
            MemoryDirs.delete(work);
        }
    }

    // (a)
    @Test
    @Order(1)
    void podsCreatedWithoutTheWebhook_areFound_withAnEventEach_andTheGauge() throws Exception {
        Instant created = Instant.now();
        new AppsV1Api(server.adminClient()).createNamespacedReplicaSet(namespace, new V1ReplicaSet()
                .metadata(new V1ObjectMeta().name("web"))
                .spec(new V1ReplicaSetSpec().replicas(1).selector(new V1LabelSelector().matchLabels(Map.of("app", "web")))
                        .template(new V1PodTemplateSpec().metadata(new V1ObjectMeta().labels(Map.of("app", "web"))
                                .annotations(Map.of(ANNOTATION, "[{path: token, audience: vault}]")))
                                .spec(podSpec())))).execute();
        V1Pod bare = new V1Pod().metadata(new V1ObjectMeta().name("bare")
                .annotations(Map.of(ANNOTATION, "[{path: token}]"))).spec(podSpec());
        core.createNamespacedPod(namespace, bare).execute();

        String[] events = new String[2];
        awaitTrue("TokenVolumeMissing on the ReplicaSet's pod and the bare pod", WAIT, () -> {
            events[0] = webPod().map(p -> event(p.getMetadata().getName())).orElse(null);
            events[1] = event("bare");
            return events[0] != null && events[1] != null;
        });
        Instant seen = Instant.now();
        assertThat(events[0]).contains("has no volume satoken-agent-tokens", "Delete it once the webhook runs");
        assertThat(events[1]).contains("(no controller: it is not evicted for you)");
        awaitTrue("satoken_pods_missing_injection 2", WAIT,
                () -> controllers.metric("satoken_pods_missing_injection") == 2.0);
        List<Duration> latencies = new ArrayList<>();
        for (CoreV1Event e : core.listNamespacedEvent(namespace).execute().getItems()) {
            if ("TokenVolumeMissing".equals(e.getReason())) {
                V1Pod pod = core.readNamespacedPod(e.getInvolvedObject().getName(), namespace).execute();
                latencies.add(Duration.between(pod.getMetadata().getCreationTimestamp().toInstant(),
                        e.getFirstTimestamp().toInstant()));
            }
        }
        assertThat(latencies).hasSize(2).allSatisfy(d -> assertThat(d).isLessThan(Duration.ofSeconds(10)));
        Figures.record(TEST, String.format(Locale.ROOT, "pods created with no webhook registered (a ReplicaSet's, "
                + "by kube-controller-manager, and a bare pod): both TokenVolumeMissing Events seen %d ms after the "
                + "ReplicaSet's create call (polled every 200 ms; creationTimestamp to the Event's: %s, whole seconds), "
                + "satoken_pods_missing_injection 2; the check watches pods, so it waits for no resync",
                Duration.between(created, seen).toMillis(), latencies.stream().map(d -> d.toSeconds() + " s").toList()));
    }

    // (b)
    @Test
    @Order(2)
    void withTheWebhookBack_andEvictionOn_theReplicaSetsPodComesBackMutated_theBarePodStays() throws Exception {
        DeployedManifests.registerWebhooks(server.adminClient(), DeployedControlplane.DEPLOY, webhookUrl, caBundle);
        String before = webPod().orElseThrow().getMetadata().getUid();
        controllers.close();
        Instant restarted = Instant.now();
        controllers = startControllers("injection-check-delete", true);

        V1Pod[] replaced = new V1Pod[1];
        awaitTrue("the ReplicaSet's pod replaced by one with the token volume", WAIT, () -> {
            replaced[0] = webPod().filter(p -> !p.getMetadata().getUid().equals(before)).orElse(null);
            return replaced[0] != null;
        });
        Duration took = Duration.between(restarted, Instant.now());
        List<String> volumes = Objects.requireNonNull(replaced[0].getSpec().getVolumes()).stream()
                .map(V1Volume::getName).toList();
        assertThat(volumes).contains("satoken-agent-tokens");
        assertThat(core.readNamespacedPod("bare", namespace).execute().getSpec().getVolumes())
                .extracting(V1Volume::getName).doesNotContain("satoken-agent-tokens");
        awaitTrue("satoken_pods_missing_injection 1 (the bare pod)", WAIT,
                () -> controllers.metric("satoken_pods_missing_injection") == 1.0);
        Figures.record(TEST, String.format(Locale.ROOT, "webhook registered, check started with "
                + "--injection-check-delete-pods: the ReplicaSet's pod evicted and recreated through the webhook with "
                + "its token volume %d ms after the check started (kube-controller-manager's ReplicaSet controller); "
                + "the bare pod left as it was; satoken_pods_missing_injection 1", took.toMillis()));
    }

    // --- the pieces -----------------------------------------------------------------------------

    /** The controllers' Deployment as the Components leave it, without leader election (one process at a time). */
    private static SatokenProcess startControllers(String name, boolean evict) throws Exception {
        DeployedControlplane.Workload base = DeployedControlplane.controllers();
        List<String> args = new ArrayList<>();
        for (String arg : base.args()) {
            args.add(switch (arg) {
                case "--controllers=*" -> "--controllers=*,injection-check";
                case "--leader-elect=true" -> "--leader-elect=false";
                default -> arg;
            });
        }
        if (evict) {
            args.add("--injection-check-delete-pods");
        }
        base.deployment().getSpec().getTemplate().getSpec().getContainers().get(0).setArgs(args);
        DeployedControlplane.Workload workload = new DeployedControlplane.Workload(base.namespace(), name,
                base.serviceAccount(), args, base.deployment());
        SatokenProcess process = DeployedControlplane.start("injection", server, workload, work, files,
                server.servingCertificate()).process();
        process.awaitReady(WAIT);
        return process;
    }

    private static V1PodSpec podSpec() {
        V1PodSpec spec = new V1PodSpec().addContainersItem(new V1Container().name("app").image("satoken.test/busybox:1"));
        spec.setOverhead(null);
        return spec;
    }

    private static Optional<V1Pod> webPod() {
        try {
            return core.listNamespacedPod(namespace).labelSelector("app=web").execute().getItems().stream()
                    .filter(p -> p.getMetadata().getDeletionTimestamp() == null).findFirst();
        } catch (ApiException e) {
            return Optional.empty();
        }
    }

    private static String event(String pod) {
        try {
            return core.listNamespacedEvent(namespace).fieldSelector("involvedObject.name=" + pod).execute()
                    .getItems().stream().filter(e -> "TokenVolumeMissing".equals(e.getReason()))
                    .map(CoreV1Event::getMessage).findFirst().orElse(null);
        } catch (ApiException e) {
            return null;
        }
    }

    private interface Call {
        Object run() throws ApiException;
    }

    private static boolean exists(Call call) {
        try {
            call.run();
            return true;
        } catch (ApiException e) {
            return false;
        }
    }

    private static void awaitTrue(String what, Duration timeout, java.util.function.BooleanSupplier condition) {
        CsiDriverNode.awaitTrue(what, timeout, condition);
    }
}
