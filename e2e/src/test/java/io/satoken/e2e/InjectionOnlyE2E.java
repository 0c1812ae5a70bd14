package io.satoken.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import io.kubernetes.client.openapi.ApiException;
import io.kubernetes.client.openapi.apis.AdmissionregistrationV1Api;
import io.kubernetes.client.openapi.apis.CoreV1Api;
import io.kubernetes.client.openapi.models.AdmissionregistrationV1WebhookClientConfig;
import io.kubernetes.client.openapi.models.RbacV1Subject;
import io.kubernetes.client.openapi.models.V1ClusterRole;
import io.kubernetes.client.openapi.models.V1ClusterRoleBinding;
import io.kubernetes.client.openapi.models.V1Container;
import io.kubernetes.client.openapi.models.V1Deployment;
import io.kubernetes.client.openapi.models.V1MutatingWebhook;
import io.kubernetes.client.openapi.models.V1MutatingWebhookConfiguration;
import io.kubernetes.client.openapi.models.V1Namespace;
import io.kubernetes.client.openapi.models.V1ObjectMeta;
import io.kubernetes.client.openapi.models.V1Pod;
import io.kubernetes.client.openapi.models.V1RoleBinding;
import io.kubernetes.client.openapi.models.V1PodSpec;
import io.kubernetes.client.openapi.models.V1ServiceAccount;
import io.kubernetes.client.openapi.models.V1ValidatingWebhookConfiguration;
import io.kubernetes.client.openapi.models.V1Volume;
import io.kubernetes.client.util.Yaml;
import io.satoken.common.testing.KubeApiServer;
import io.satoken.common.testing.RequiresKubeApiServer;
import io.satoken.controlplane.testing.ApiServerClientCertificate;
import io.satoken.controlplane.testing.DeployedManifests;
import io.satoken.controlplane.webhook.TestCertificates;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;

/**
 * The injection-only profile ({@code deploy/profiles/injection-only}) as {@code kubectl kustomize} renders it, against
 * a real kube-apiserver that keeps its own ServiceAccount admission plugin (the harness turns it off for the other
 * tests; here it stays on, and the test creates each namespace's {@code default} ServiceAccount, as no
 * kube-controller-manager runs). The profile's MutatingWebhookConfiguration is registered as rendered, only its
 * Service reference replaced by a loopback URL (no kube-proxy here); the webhook is the profile's Deployment run as a
 * local process with its own args. No kubelet: a pod admitted by the API server is the check. "Down" is that process
 * stopped, so each call is refused at connect; a webhook the API server cannot reach at all (a NetworkPolicy dropping
 * its calls) fails open the same way after the registration's 5 s timeout, which this test does not wait for.
 */
@RequiresKubeApiServer
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class InjectionOnlyE2E {

    private static final String TEST = "InjectionOnlyE2E";
    private static final Path PROFILE = E2E.repo().resolve("deploy/profiles/injection-only");
    private static final String OPT_IN = "satoken.io/injection";
    private static final String VOLUME = "satoken-agent-tokens";
    private static final Duration WAIT = Duration.ofSeconds(60);

    private static Path work;
    private static KubeApiServer server;
    private static CoreV1Api core;
    private static List<Object> rendered;
    private static byte[] caBundle;
    private static Map<String, Path> files;
    private static SatokenProcess webhook;

    @BeforeAll
    static void start() throws Exception {
        if (!Kubectl.installed()) {
            System.err.println("*** SKIPPED " + TEST + ": kubectl not found on PATH ***");
            Assumptions.abort("kubectl not found on PATH");
        }
        work = Files.createTempDirectory("satoken-e2e-injection-only-");
        ApiServerClientCertificate clientCertificate = ApiServerClientCertificate.write(work.resolve("client-auth"));
        // the built-in ServiceAccount plugin on: the cluster this profile is for
        server = clientCertificate.presentedBy(KubeApiServer.builder())
                .flag("--disable-admission-plugins", "").build().start();
        core = new CoreV1Api(server.adminClient());
        Kubectl kubectl = Kubectl.forAdmin(server);
        Commands.Result render = kubectl.run("kustomize", PROFILE.toString());
        assertThat(render.exit()).as("kubectl kustomize %s:%n%s", PROFILE, render.output()).isZero();
        rendered = Yaml.loadAll(render.output());
        DeployedControlplane.applyNamespacesAndRbac(kubectl);
        TestCertificates.Pair tls = TestCertificates.write(work.resolve("webhook-tls"), "satoken-webhook");
        caBundle = Files.readAllBytes(tls.cert());
        files = DeployedControlplane.mountedFiles(tls, clientCertificate, work.resolve("no-signing-key"));
    }

    @AfterAll
    static void stop() {
        if (webhook != null) {
            webhook.close();
        }
        E2E.closeKeepingLogs(server, "injection-only");
        if (work != null) {
            MemoryDirs.delete(work);
        }
    }

    @Test
    @Order(1)
    void profile_registersOnlyTheInjectionPath_optInByLabel_failingOpen_andNoServiceAccountAdmission() {
        assertThat(rendered).noneMatch(o -> o instanceof V1ValidatingWebhookConfiguration);
        List<V1MutatingWebhook> hooks = registration().getWebhooks();
        assertThat(hooks).hasSize(2).allSatisfy(w -> {
            assertThat(w.getFailurePolicy()).as(w.getName()).isEqualTo("Ignore");
            assertThat(w.getClientConfig().getService().getPath()).as(w.getName())
                    .isEqualTo("/mutate/pods/agent-tokens");
            assertThat(w.getRules()).as(w.getName()).allSatisfy(r -> {
                assertThat(r.getResources()).containsExactly("pods");
                assertThat(r.getOperations()).containsExactly("CREATE");
            });
        });
        assertThat(hooks.get(0).getNamespaceSelector().getMatchLabels()).isEqualTo(Map.of(OPT_IN, "enabled"));
        assertThat(hooks.get(1).getObjectSelector().getMatchLabels()).isEqualTo(Map.of(OPT_IN, "enabled"));
        assertThat(args("satoken-webhook")).contains("--webhooks=agent-tokens")
                .noneMatch(a -> a.startsWith("--webhooks=") && !a.equals("--webhooks=agent-tokens"));
        assertThat(args("satoken-controlplane")).contains("--controllers=injection-check")
                .noneMatch(a -> a.startsWith("--controllers=") && !a.equals("--controllers=injection-check"));
    }

    @Test
    @Order(1)
    void profile_grantsOnlyWhatTheInjectionCheckAndLeaderElectionUse_andTheWebhookNothing() {
        // the base's rights for the parts this profile does not run (ServiceAccounts, kube-root-ca.crt, ClusterRole
        // aggregation with escalate, the webhook's reads) must not come along with it
        assertThat(rendered.stream().filter(o -> o instanceof V1ClusterRole).map(o -> ((V1ClusterRole) o).getMetadata()
                .getName())).containsExactly("satoken-controlplane:injection-check");
        assertThat(rendered.stream().filter(o -> o instanceof V1ClusterRoleBinding)
                .map(o -> (V1ClusterRoleBinding) o)).singleElement().satisfies(b -> {
                    assertThat(b.getRoleRef().getName()).isEqualTo("satoken-controlplane:injection-check");
                    assertThat(b.getSubjects()).extracting(RbacV1Subject::getName)
                            .containsExactly("satoken-controlplane");
                });
        assertThat(rendered.stream().filter(o -> o instanceof V1RoleBinding).map(o -> (V1RoleBinding) o))
                .allSatisfy(b -> assertThat(b.getSubjects()).extracting(RbacV1Subject::getName)
                        .doesNotContain("satoken-webhook"));
    }

    @Test
    @Order(2)
    void optedInPods_getTheTokenVolume_fromTheRunningWebhook_besideTheBuiltInPluginsApiToken() throws Exception {
        V1Deployment deployment = deployment("satoken-webhook");
        DeployedControlplane.Workload workload = new DeployedControlplane.Workload(
                deployment.getMetadata().getNamespace(), deployment.getMetadata().getName(),
                deployment.getSpec().getTemplate().getSpec().getServiceAccountName(),
                DeployedManifests.args(deployment), deployment);
        DeployedControlplane.Started started = DeployedControlplane.start("injection-only", server, workload, work,
                files, server.servingCertificate());
        webhook = started.process();
        webhook.awaitReady(WAIT);
        register(started.port("--webhook-address"));
        String optedIn = namespace("opted-in", true);
        String plain = namespace("plain", false);
        // the API server loads registrations asynchronously: wait until a dry-run pod gets the volume
        Awaitility.await("the registration loaded").atMost(WAIT).ignoreExceptions().until(() -> volumes(
                core.createNamespacedPod(optedIn, pod("probe", false)).dryRun("All").execute()).contains(VOLUME));

        V1Pod byNamespace = core.createNamespacedPod(optedIn, pod("app", false)).execute();
        V1Pod byPodLabel = core.createNamespacedPod(plain, pod("labelled", true)).execute();
        V1Pod notOptedIn = core.createNamespacedPod(plain, pod("app", false)).execute();

        for (V1Pod p : List.of(byNamespace, byPodLabel)) {
            // one API token volume, the built-in plugin's: the webhook did no ServiceAccount admission of its own
            assertThat(volumes(p)).as(p.getMetadata().getName()).contains(VOLUME)
                    .filteredOn(v -> v.startsWith("kube-api-access-")).hasSize(1);
        }
        assertThat(volumes(notOptedIn)).doesNotContain(VOLUME).anyMatch(v -> v.startsWith("kube-api-access-"));
    }

    @Test
    @Order(3)
    void podsAreCreated_whileTheWebhookIsDown_inANamespaceThatDidNotOptIn_andWithoutTheVolumeInOneThatDid()
            throws Exception {
        // the registration stays as the previous test left it, loaded by the API server; its webhook stops, so
        // every call is refused at connect (as when no replica is ready)
        webhook.close();
        webhook = null;
        String plain = namespace("plain", false);
        String optedIn = namespace("opted-in", true);

        long started = System.nanoTime();
        V1Pod inPlain = core.createNamespacedPod(plain, pod("app", false)).execute();
        Duration plainTook = Duration.ofNanos(System.nanoTime() - started);
        started = System.nanoTime();
        V1Pod inOptedIn = core.createNamespacedPod(optedIn, pod("app", false)).execute();
        Duration optedInTook = Duration.ofNanos(System.nanoTime() - started);

        assertThat(volumes(inPlain)).doesNotContain(VOLUME).anyMatch(v -> v.startsWith("kube-api-access-"));
        // failurePolicy Ignore: admitted without the volume, for the injection check to report
        assertThat(volumes(inOptedIn)).doesNotContain(VOLUME).anyMatch(v -> v.startsWith("kube-api-access-"));
        Figures.record(TEST, String.format(Locale.ROOT, "webhook stopped (connection refused), failurePolicy Ignore: "
                + "a pod in a namespace that did not opt in created in %d ms (never sent to the webhook), one in a "
                + "namespace that did in %d ms, without the token volume", plainTook.toMillis(), optedInTook.toMillis()));
    }

    // --- the pieces -----------------------------------------------------------------------------

    private static V1MutatingWebhookConfiguration registration() {
        return rendered.stream().filter(o -> o instanceof V1MutatingWebhookConfiguration)
                .map(V1MutatingWebhookConfiguration.class::cast).reduce((a, b) -> {
                    throw new AssertionError("more than one MutatingWebhookConfiguration in " + PROFILE);
                }).orElseThrow(() -> new AssertionError("no MutatingWebhookConfiguration in " + PROFILE));
    }

    private static V1Deployment deployment(String name) {
        return rendered.stream().filter(o -> o instanceof V1Deployment d && d.getMetadata().getName().equals(name))
                .map(V1Deployment.class::cast).findFirst().orElseThrow();
    }

    private static List<String> args(String deployment) {
        return DeployedManifests.args(deployment(deployment));
    }

    /** The profile's registration as rendered, its Service reference replaced by {@code https://127.0.0.1:port}. */
    private static void register(int port) throws Exception {
        // a fresh copy each time: the rendered objects stay as kustomize wrote them
        V1MutatingWebhookConfiguration config = Yaml.loadAs(Yaml.dump(registration()),
                V1MutatingWebhookConfiguration.class);
        for (V1MutatingWebhook w : config.getWebhooks()) {
            w.clientConfig(new AdmissionregistrationV1WebhookClientConfig()
                    .url("https://127.0.0.1:" + port + w.getClientConfig().getService().getPath()).caBundle(caBundle));
        }
        AdmissionregistrationV1Api api = new AdmissionregistrationV1Api(server.adminClient());
        try {
            api.deleteMutatingWebhookConfiguration(config.getMetadata().getName()).execute();
        } catch (ApiException e) {
            if (e.getCode() != 404) {
                throw e;
            }
        }
        config.getMetadata().setResourceVersion(null);
        api.createMutatingWebhookConfiguration(config).execute();
    }

    /** A namespace with its {@code default} ServiceAccount (the built-in plugin requires it), opted in or not. */
    private static String namespace(String prefix, boolean optIn) throws ApiException {
        V1ObjectMeta meta = new V1ObjectMeta().generateName(prefix + "-");
        if (optIn) {
            meta.labels(Map.of(OPT_IN, "enabled"));
        }
        String name = core.createNamespace(new V1Namespace().metadata(meta)).execute().getMetadata().getName();
        core.createNamespacedServiceAccount(name, new V1ServiceAccount().metadata(new V1ObjectMeta().name("default")))
                .execute();
        return name;
    }

    /** A pod that asks for a token with the annotation; with {@code optIn}, the pod itself carries the label. */
    private static V1Pod pod(String name, boolean optIn) {
        V1ObjectMeta meta = new V1ObjectMeta().name(name)
                .annotations(Map.of("satoken.io/projections", "[{path: vault/token, audience: vault}]"));
        if (optIn) {
            meta.labels(Map.of(OPT_IN, "enabled"));
        }
        V1PodSpec spec = new V1PodSpec().addContainersItem(new V1Container().name("app").image("satoken.test/busybox:1"));
        spec.setOverhead(null);
        return new V1Pod().metadata(meta).spec(spec);
    }

    private static List<String> volumes(V1Pod pod) {
        return Objects.requireNonNullElse(pod.getSpec().getVolumes(), List.<V1Volume>of()).stream()
                .map(V1Volume::getName).toList();
    }
}
