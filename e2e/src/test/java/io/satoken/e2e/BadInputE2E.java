package io.satoken.e2e;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;
import static org.awaitility.Awaitility.await;

import com.google.gson.JsonArray;
import com.google.gson.JsonObject;
import com.google.gson.JsonParser;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.kubernetes.client.openapi.models.V1Pod;
import io.satoken.agent.testing.KubeletCsiClient;
import io.satoken.common.testing.KubeApiServer;
import io.satoken.common.testing.MountTable;
import io.satoken.common.testing.PrometheusText;
import io.satoken.common.testing.RequiresKubeApiServer;
import io.satoken.controlplane.webhook.TestCertificates;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * Malformed input, from every side the built processes take it, against a real kube-apiserver:
 * <ul>
 *   <li>invalid {@code volumeAttributes} of the CSI volumes of pods on the agent's node, published by the
 *       test as the node's kubelet ({@link KubeletCsiClient}): each publish is refused with InvalidArgument
 *       naming the attribute and the rule (what the kubelet shows in the pod's FailedMount Event), nothing
 *       is mounted, and a valid volume published after them still gets its token;</li>
 *   <li>invalid agent configs, edited into the file of a running static-mode agent (each rejected with a log
 *       line naming the field, the token on disk untouched, a valid edit afterwards applied) and given at
 *       start-up (exit status 2, one line naming the field);</li>
 *   <li>malformed AdmissionReviews and HTTP requests sent over TLS to the control plane's webhook: each gets
 *       the documented status and a denial naming the field, and a valid review afterwards is patched.</li>
 * </ul>
 * No process crashes: each is alive and answers {@code /healthz} with 200 at the end.
 */
@RequiresKubeApiServer
class BadInputE2E {

    private static final String TEST = "bad-input";
    private static final String NODE = "node-a";

    @RegisterExtension
    static final ApiServerFixture API = new ApiServerFixture(TEST);

    @Test
    @RequiresMounts
    void invalidVolumeAttributes_areRefusedWithInvalidArgumentNamingTheAttribute_andAValidVolumeStillGetsItsToken(
            @TempDir Path tmp) throws Exception {
        KubeApiServer server = API.server();
        CsiAgentSetup setup = CsiAgentSetup.write(server, tmp, NODE);
        String namespace = server.createNamespace("bad-attributes");
        server.createServiceAccount(namespace, "app");
        Path kubeletDir = setup.kubeletDir();
        try (KubeletCsiClient kubelet = KubeletCsiClient.open(kubeletDir);
                SatokenProcess agent = setup.start("bad-input-csi-agent", kubelet)) {
            NodePods pods = new NodePods(server.adminClient(), namespace, NODE, "app");
            List<BadInputs.AttributeCase> cases = BadInputs.attributes();
            List<String> wrong = new ArrayList<>();
            for (int i = 0; i < cases.size(); i++) {
                BadInputs.AttributeCase c = cases.get(i);
                V1Pod pod = pods.create(String.format("bad-%02d", i), c.attributes());
                StatusRuntimeException refused = catchThrowableOfType(StatusRuntimeException.class,
                        () -> kubelet.publish(pod, NodePods.volume(pod)));
                String message = refused == null ? null : refused.getStatus().getDescription();
                boolean mounted = MountTable.at(kubelet.targetPath(pod, NodePods.VOLUME)) != null;
                if (refused == null || refused.getStatus().getCode() != Status.Code.INVALID_ARGUMENT
                        || message == null || !c.expected().stream().allMatch(message::contains) || mounted) {
                    wrong.add(c.name() + ": got " + (refused == null ? "OK" : refused.getStatus().getCode() + " "
                            + message) + (mounted ? ", and a mount" : ""));
                }
            }
            V1Pod good = pods.create("good", Map.of("audience", "bad-input-e2e"));
            Path goodToken = kubelet.publish(good, NodePods.volume(good)).resolve("token");
            JwtClaims.of(IssuedTokens.read(goodToken));
            long mounts = MountTable.under(kubeletDir).stream()
                    .filter(m -> KubeletCsiClient.DRIVER.equals(m.source())).count();
            long records;
            try (Stream<Path> files = Files.list(kubeletDir.resolve("plugins").resolve(KubeletCsiClient.DRIVER)
                    .resolve("volumes"))) {
                records = files.filter(f -> f.toString().endsWith(".json")).count();
            }
            double invalid = agent.metric("satoken_projections_invalid_total", "source=\"pod\"");
            Figures.record(TEST, String.format("CSI volume attributes: %d invalid, %d refused as documented"
                            + " (InvalidArgument naming the attribute and the rule, the text of the kubelet's"
                            + " FailedMount Event; nothing mounted); the valid volume published after them got its"
                            + " token; %d tmpfs mount(s) and %d volume record(s) left, the valid volume's;"
                            + " satoken_projections_invalid_total{source=pod} = %.0f; agent alive, /healthz %d",
                    cases.size(), cases.size() - wrong.size(), mounts, records, invalid, agent.healthz()));
            assertThat(wrong).as("invalid attributes not refused as documented").isEmpty();
            assertThat(mounts).as("tmpfs mounts: the valid volume's only").isEqualTo(1);
            assertThat(records).as("volume records: the valid volume's only").isEqualTo(1);
            assertThat(agent.isAlive()).isTrue();
            assertThat(agent.healthz()).isEqualTo(200);
        }
    }

    @Test
    void invalidStaticConfigs_areRejectedNamingTheField_whileTheTokenStays_andExitWith2AtStartup(@TempDir Path tmp)
            throws Exception {
        KubeApiServer server = API.server();
        Path kubeconfig = tmp.resolve("kubeconfig");
        server.writeKubeconfig(kubeconfig, server.adminToken());
        String namespace = server.createNamespace("bad-config");
        server.createServiceAccount(namespace, "exporter");
        Path dir = tmp.resolve("tokens");
        String good = "mode: static\nprojections:\n  - namespace: " + namespace + "\n    serviceAccount: exporter\n"
                + "    audiences: [bad-input]\n    dir: " + dir + "\n";
        Path config = Files.writeString(tmp.resolve("agent.yaml"), good);
        String address = "127.0.0.1:" + E2E.freePort();

        // 1. A running agent gets each bad config by an edit of its file.
        List<String> wrong = new ArrayList<>();
        List<BadInputs.Case> cases = BadInputs.configs(namespace, dir.toString());
        double invalidBefore;
        double invalidAfter;
        double failures;
        try (SatokenProcess agent = SatokenProcess.agent("bad-input-static-agent", List.of("run", "--config",
                config.toString(), "--kubeconfig", kubeconfig.toString(), "--metrics-address", address), address,
                Map.of())) {
            agent.awaitReady(Duration.ofSeconds(60));
            Path tokenFile = dir.resolve("token");
            String token = IssuedTokens.read(tokenFile);
            invalidBefore = agent.metric("satoken_projections_invalid_total", "source=\"config\"");
            for (BadInputs.Case c : cases) {
                double failed = agent.metric("satoken_config_reloads_total", "result=\"failure\"");
                double reloaded = agent.metric("satoken_config_reloads_total", "result=\"success\"");
                int logLength = agent.logText().length();
                replace(config, c.input());
                await().atMost(Duration.ofSeconds(20)).pollInterval(Duration.ofMillis(200))
                        .until(() -> agent.metric("satoken_config_reloads_total", "result=\"failure\"") > failed
                                || agent.metric("satoken_config_reloads_total", "result=\"success\"") > reloaded);
                String logged = agent.logText().substring(logLength);
                List<String> rejections = logged.lines().filter(l -> l.contains("rejected")).toList();
                boolean documented = rejections.size() == 1
                        && c.expected().stream().allMatch(rejections.get(0)::contains)
                        && agent.metric("satoken_config_reloads_total", "result=\"success\"") == reloaded
                        && IssuedTokens.read(tokenFile).equals(token);
                if (!documented) {
                    wrong.add(c.name() + ": logged " + rejections);
                }
            }
            failures = agent.metric("satoken_config_reloads_total", "result=\"failure\"");
            invalidAfter = agent.metric("satoken_projections_invalid_total", "source=\"config\"");

            // A good edit after all the bad ones is applied: a second projection gets its file.
            Path second = tmp.resolve("second");
            replace(config, good + "  - namespace: " + namespace + "\n    serviceAccount: exporter\n"
                    + "    audiences: [bad-input-2]\n    dir: " + second + "\n");
            await().atMost(Duration.ofSeconds(30)).until(() -> Files.exists(second.resolve("token")));
            IssuedTokens.read(second.resolve("token"));
            assertThat(IssuedTokens.read(tokenFile).equals(token)).as("the first token, unchanged throughout").isTrue();
            assertThat(agent.isAlive()).isTrue();
            assertThat(agent.healthz()).isEqualTo(200);
        }

        // 2. Bad configs at start-up: exit status 2 and one line naming the field.
        List<BadInputs.Case> startup = BadInputs.startupConfigs(namespace, dir.toString());
        List<String> wrongAtStart = new ArrayList<>();
        for (BadInputs.Case c : startup) {
            Path bad = Files.writeString(tmp.resolve("startup.yaml"), c.input());
            String port = "127.0.0.1:" + E2E.freePort();
            String name = "bad-input-startup-agent";
            try (SatokenProcess agent = SatokenProcess.agent(name, List.of("run", "--config",
                    bad.toString(), "--kubeconfig", kubeconfig.toString(), "--metrics-address", port), port, Map.of())) {
                int status = agent.awaitExit(Duration.ofSeconds(60));
                List<String> lines = agent.logText().lines().filter(l -> !l.isBlank()).toList();
                // every error at once, one line each, each naming the command and the config (nothing else logged)
                String all = String.join("\n", lines);
                if (status != 2 || lines.isEmpty() || !lines.stream().allMatch(l -> l.startsWith("satoken-agent run: "))
                        || !c.expected().stream().allMatch(all::contains)) {
                    wrongAtStart.add(c.name() + ": exit " + status + ", " + lines.size() + " lines: " + lines);
                }
            }
        }
        Figures.record(TEST, String.format("static configs: %d bad edits to a running agent, %d rejected as documented"
                        + " (one log line naming the field, token unchanged, no reload) and the valid edit after them"
                        + " applied; satoken_config_reloads_total{result=failure} = %.0f;"
                        + " satoken_projections_invalid_total{source=config} went %.0f -> %.0f; %d bad configs at"
                        + " start-up, %d exited 2 with one line per error, each naming the field",
                cases.size(), cases.size() - wrong.size(), failures, invalidBefore, invalidAfter, startup.size(),
                startup.size() - wrongAtStart.size()));
        assertThat(wrong).as("bad configs not rejected as documented").isEmpty();
        assertThat(failures).as("satoken_config_reloads_total{result=failure}").isEqualTo(cases.size());
        assertThat(invalidAfter - invalidBefore).as("satoken_projections_invalid_total{source=config}")
                .isEqualTo(cases.size());
        assertThat(wrongAtStart).as("bad configs at start-up not refused as documented").isEmpty();
    }

    @Test
    void malformedAdmissionRequests_getTheDocumentedDenialNamingTheField_andAValidReviewIsStillPatched(
            @TempDir Path tmp) throws Exception {
        KubeApiServer server = API.server();
        Path kubeconfig = tmp.resolve("kubeconfig");
        server.writeKubeconfig(kubeconfig, server.adminToken());
        String namespace = server.createNamespace("bad-review");
        server.createServiceAccount(namespace, "default");
        TestCertificates.Pair pair = TestCertificates.write(tmp.resolve("tls"), "localhost");
        int webhookPort = E2E.freePort();
        String address = "127.0.0.1:" + E2E.freePort();
        try (SatokenProcess controlplane = SatokenProcess.controlplane("bad-input-controlplane", List.of("run",
                "--kubeconfig", kubeconfig.toString(), "--controllers=-*", "--no-leader-elect",
                "--webhook-address", "127.0.0.1:" + webhookPort, "--tls-cert-file", pair.cert().toString(),
                "--tls-private-key-file", pair.key().toString(), "--agent-service-account=satoken-system/satoken-agent",
                "--metrics-address", address), address, Map.of())) {
            controlplane.awaitReady(Duration.ofSeconds(60));
            WebhookClient client = new WebhookClient(webhookPort, pair.pem());
            List<WebhookCase> cases = new BadReviews(namespace).cases(client);
            Map<String, List<String>> wrong = new LinkedHashMap<>();
            Map<String, Integer> total = new LinkedHashMap<>();
            for (WebhookCase c : cases) {
                total.merge(c.category(), 1, Integer::sum);
                String why = c.check().run();
                if (why != null) {
                    wrong.computeIfAbsent(c.category(), k -> new ArrayList<>()).add(c.name() + ": " + why);
                }
            }
            // The good review after all the bad ones.
            WebhookClient.Answer good = client.post("/mutate/pods", BadReviews.review("good-1", namespace,
                    BadReviews.pod("- path: token\n  audience: vault\n")));
            JsonArray patch = good.allowed() ? JsonParser.parseString(new String(java.util.Base64.getDecoder()
                    .decode(good.response().get("patch").getAsString()), StandardCharsets.UTF_8)).getAsJsonArray()
                    : new JsonArray();
            String metrics = controlplane.metrics();
            String perCategory = total.entrySet().stream().map(e -> e.getKey() + " " + (e.getValue()
                    - wrong.getOrDefault(e.getKey(), List.of()).size()) + "/" + e.getValue())
                    .collect(Collectors.joining(", "));
            Figures.record(TEST, String.format("admission webhook: %d malformed requests, documented answer per"
                            + " category: %s; satoken_webhook_requests_total: invalid %.0f, denied %.0f, error %.0f;"
                            + " the valid review after them: HTTP %d, allowed %s, %d patch operations; control plane"
                            + " alive, /healthz %d",
                    cases.size(), perCategory, PrometheusText.value(metrics, "satoken_webhook_requests_total",
                            "result=\"invalid\""),
                    PrometheusText.value(metrics, "satoken_webhook_requests_total", "result=\"denied\""),
                    PrometheusText.value(metrics, "satoken_webhook_requests_total", "result=\"error\""),
                    good.status(), good.allowed(), patch.size(), controlplane.healthz()));
            assertThat(wrong).as("requests without the documented answer").isEmpty();
            assertThat(good.status()).isEqualTo(200);
            assertThat(good.allowed()).as("the valid review is allowed").isTrue();
            assertThat(good.uid()).isEqualTo("good-1");
            assertThat(patch.toString()).as("the patch mounts the agent's tokens").contains("satoken-agent-tokens");
            assertThat(PrometheusText.value(metrics, "satoken_webhook_requests_total", "result=\"error\"")).isZero();
            assertThat(controlplane.isAlive()).isTrue();
            assertThat(controlplane.healthz()).isEqualTo(200);
            int status = controlplane.stop();
            Figures.record(TEST, "control plane exit status after SIGTERM: " + status);
            assertThat(status).as("exit status after SIGTERM, within 20 s (README: 0)").isZero();
        }
    }

    /** One malformed request; {@code check} sends it and returns null when the answer is the documented one. */
    record WebhookCase(String category, String name, Check check) {
        interface Check {
            String run() throws Exception;
        }
    }

    /** Writes a config the way an editor or a ConfigMap update does: whole, by a rename. */
    private static void replace(Path file, String text) throws IOException {
        Path next = file.resolveSibling(file.getFileName() + ".next");
        Files.writeString(next, text);
        Files.move(next, file, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
    }

    static JsonObject object(String json) {
        return JsonParser.parseString(json).getAsJsonObject();
    }
}
