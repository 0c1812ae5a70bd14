package io.satoken.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import com.google.gson.JsonObject;
import com.google.gson.JsonParser;
import io.kubernetes.client.openapi.ApiException;
import io.kubernetes.client.openapi.apis.CoreV1Api;
import io.kubernetes.client.openapi.models.CoreV1Event;
import io.kubernetes.client.openapi.models.V1CSIVolumeSource;
import io.kubernetes.client.openapi.models.V1Capabilities;
import io.kubernetes.client.openapi.models.V1Container;
import io.kubernetes.client.openapi.models.V1ObjectMeta;
import io.kubernetes.client.openapi.models.V1Pod;
import io.kubernetes.client.openapi.models.V1PodSecurityContext;
import io.kubernetes.client.openapi.models.V1PodSpec;
import io.kubernetes.client.openapi.models.V1SeccompProfile;
import io.kubernetes.client.openapi.models.V1SecurityContext;
import io.kubernetes.client.openapi.models.V1ServiceAccount;
import io.kubernetes.client.openapi.models.V1Volume;
import io.kubernetes.client.openapi.models.V1VolumeMount;
import io.satoken.e2e.node.ExecResult;
import io.satoken.e2e.node.KubeletNode;
import io.satoken.e2e.node.RunningPod;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.parallel.Execution;
import org.junit.jupiter.api.parallel.ExecutionMode;
import org.junit.jupiter.api.parallel.ResourceLock;

/**
 * Reload notification and the escalation before expiry on a real kubelet and containerd: two restricted pods ask for
 * {@code reloadSignal: SIGHUP}; one's shell re-reads its token on SIGHUP ({@code trap 'cat ...' HUP}), the other's
 * ignores it ({@code trap '' HUP}). One wait for the 600 s tokens' rotation (the API server's minimum lifetime; no
 * test-only setting shortens it) covers both: (b) after the rotation the agent signals each container once the new
 * token is in place; the re-reader opens it within a second and explain says "re-read at", with no Event; (c) the
 * ignorer stays on its old token: explain says "not re-read", and at 90 % of the old token's lifetime it gets a
 * {@code TokenNotReread} Event saying it was signalled, and a {@code TokenExpiringUnread} Event (the default margin,
 * 5 minutes, is already reached then). (a) Bad reload attributes are FailedMount Events naming the attribute.
 */
@Execution(ExecutionMode.CONCURRENT) // waits ~9.5 min for rotations; see junit-platform.properties
@ResourceLock(KubeletNode.RESOURCE)
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class ReloadSignalE2E {

    private static final String TEST = "ReloadSignalE2E";
    private static final String DRIVER = "tokens.satoken.io";
    private static final long LIFETIME = 600;
    private static final String SA = "app";

    private static CsiDriverNode csi;
    private static KubeletNode node;
    private static SatokenProcess agent;
    private static String namespace;
    private static RunningPod rereader;
    private static RunningPod ignorer;
    private static String firstToken;
    private static Instant issued;

    @BeforeAll
    static void startNodeAndAgent() throws Exception {
        csi = CsiDriverNode.start(TEST, "reload-agent");
        node = csi.node();
        agent = csi.agent();
        namespace = node.createNamespace("reload", Map.of("pod-security.kubernetes.io/enforce", "restricted",
                "pod-security.kubernetes.io/enforce-version", "latest"));
        new CoreV1Api(node.adminClient()).createNamespacedServiceAccount(namespace,
                new V1ServiceAccount().metadata(new V1ObjectMeta().name(SA))).execute();
    }

    @AfterAll
    static void stop() throws IOException {
        if (csi != null) {
            csi.close();
        }
    }

    // (a), and the two pods started
    @Test
    @Order(1)
    void badReloadAttributes_areFailedMountEventsNamingTheAttribute_andTwoSignalledPodsStart() throws Exception {
        Map<String, String> sighup = Map.of("audience", "vault", "expirationSeconds", String.valueOf(LIFETIME),
                "reloadSignal", "SIGHUP");
        CoreV1Api core = new CoreV1Api(node.adminClient());
        core.createNamespacedPod(namespace, pod("badsignal", "sleep 86400", Map.of("reloadSignal", "SIGKILL")))
                .execute();
        core.createNamespacedPod(namespace, pod("badcontainer", "sleep 86400",
                Map.of("reloadSignal", "SIGHUP", "reloadContainer", "sidecar"))).execute();
        rereader = node.runPod(namespace, pod("rereader", "trap 'cat /agent/token >/dev/null' HUP; "
                + "cat /agent/token >/dev/null; while true; do sleep 1; done", sighup), Duration.ofSeconds(90));
        ignorer = node.runPod(namespace, pod("ignorer", "trap '' HUP; cat /agent/token >/dev/null; "
                + "while true; do sleep 1; done", sighup), Duration.ofSeconds(90));
        firstToken = IssuedTokens.record(exec(ignorer, "cat", "/agent/token").strip());
        issued = JwtClaims.of(firstToken).issuedAt();

        String[] message = new String[2];
        awaitTrue("FailedMount Events on badsignal and badcontainer", Duration.ofSeconds(60), () -> {
            message[0] = event("badsignal", "FailedMount");
            message[1] = event("badcontainer", "FailedMount");
            return message[0] != null && message[1] != null;
        });
        assertThat(message[0]).contains("volumeAttributes.reloadSignal", "SIGKILL", "must be one of SIGHUP");
        assertThat(message[1]).contains("volumeAttributes.reloadContainer", "\"sidecar\"", "its containers: app");
        Figures.record(TEST, "bad reloadSignal: FailedMount \"" + message[0].replaceAll("\\s+", " ") + "\"");
        Figures.record(TEST, "bad reloadContainer: FailedMount \"" + message[1].replaceAll("\\s+", " ") + "\"");
        core.deleteNamespacedPod("badsignal", namespace).gracePeriodSeconds(0).execute();
        core.deleteNamespacedPod("badcontainer", namespace).gracePeriodSeconds(0).execute();
        awaitExplain("explain shows the ignorer's read", Duration.ofSeconds(30),
                () -> text("ignorer").contains("of the token now in the file"));
        assertThat(text("rereader")).contains("SIGHUP to container app after each rotation; none sent yet");
    }

    // (b)
    @Test
    @Order(2)
    void afterTheRotation_theHandlerOfSighup_rereadsItsTokenWithinASecond_andGetsNoEvent() throws Exception {
        Instant deadline = issued.plusSeconds(LIFETIME * 8 / 10 + 60);
        JsonObject[] reload = new JsonObject[1];
        awaitExplain("the re-reader is signalled after its token rotated", Duration.between(Instant.now(), deadline),
                () -> {
                    reload[0] = reload("rereader");
                    return reload[0] != null && !reload[0].get("signalledAt").isJsonNull();
                });
        Instant signalled = Instant.parse(reload[0].get("signalledAt").getAsString());
        assertThat(reload[0].get("delivered").getAsBoolean()).as(reload[0].toString()).isTrue();

        JsonObject[] file = new JsonObject[1];
        awaitExplain("the re-reader opens the new token", Duration.ofSeconds(10), () -> {
            file[0] = file("rereader");
            return file[0].get("readCurrentToken").getAsBoolean() && !file[0].get("lastRead").isJsonNull()
                    && !Instant.parse(file[0].get("lastRead").getAsString()).isBefore(signalled);
        });
        Duration latency = Duration.between(signalled, Instant.parse(file[0].get("lastRead").getAsString()));
        assertThat(latency).as("signal -> re-read").isLessThan(Duration.ofSeconds(3));
        assertThat(text("rereader")).contains("signalled at", "re-read at");
        // only now does the test read the file itself: its own open would count as a re-read
        String rotated = IssuedTokens.record(exec(rereader, "cat", "/agent/token").strip());
        assertThat(JwtClaims.of(rotated).issuedAt()).as("the rotated token").isAfter(issued);
        assertThat(JwtClaims.of(rotated).issuedAt()).as("signalled after the new token was written")
                .isBeforeOrEqualTo(signalled.plusSeconds(1));
        assertThat(exec(rereader, "cat", "/proc/1/status")).as("the shell still runs").contains("State:");
        Instant written = Instant.parse(file[0].get("rotatedAt").getAsString());
        assertThat(signalled).as("signalled once the new token is in place").isAfterOrEqualTo(written);
        Figures.record(TEST, String.format(Locale.ROOT, "SIGHUP handler that re-reads: signalled %d ms after the new "
                + "token was written, re-read %d ms after the signal (the shell runs its trap when its 1 s sleep ends)",
                Duration.between(written, signalled).toMillis(), latency.toMillis()));
    }

    // (c)
    @Test
    @Order(3)
    void theContainerIgnoringSighup_showsSignalledNotReread_thenBothWarningEvents() throws Exception {
        JsonObject[] reload = new JsonObject[1];
        awaitExplain("the ignorer is signalled", Duration.ofSeconds(60), () -> {
            reload[0] = reload("ignorer");
            return reload[0] != null && !reload[0].get("signalledAt").isJsonNull();
        });
        assertThat(reload[0].get("delivered").getAsBoolean()).isTrue();
        SatokenProcess.pause(Duration.ofSeconds(3));
        assertThat(text("ignorer")).contains("signalled at", "not re-read");

        Instant due = issued.plusSeconds(LIFETIME * 9 / 10);
        String[] message = new String[2];
        awaitTrue("TokenNotReread and TokenExpiringUnread on the ignorer",
                Duration.between(Instant.now(), due).plusSeconds(90), () -> {
                    message[0] = event("ignorer", "TokenNotReread");
                    message[1] = event("ignorer", "TokenExpiringUnread");
                    return message[0] != null && message[1] != null;
                });
        Instant seen = Instant.now();
        assertThat(message[0]).contains("The agent sent SIGHUP to container app", "it was signalled, and did not "
                + "re-read");
        assertThat(message[1]).contains("is still not opened", "expires at");
        assertThat(event("rereader", "TokenNotReread")).as("TokenNotReread on the re-reader").isNull();
        assertThat(event("rereader", "TokenExpiringUnread")).as("TokenExpiringUnread on the re-reader").isNull();
        assertThat(agent.metric("satoken_token_files_expiring_unread")).isEqualTo(1.0);
        assertThat(agent.metric("satoken_reload_signals_total", "result=\"delivered\"")).isEqualTo(2.0);
        assertThat(text("ignorer")).contains("TokenNotReread at", "TokenExpiringUnread at");
        Figures.record(TEST, String.format(Locale.ROOT, "SIGHUP ignored: explain \"signalled, not re-read\"; "
                + "TokenNotReread (\"signalled, and did not re-read\") and TokenExpiringUnread %.0f s after the held "
                + "token was issued (due at %d s; the 300 s default margin is reached by then)",
                Duration.between(issued, seen).toMillis() / 1000.0, LIFETIME * 9 / 10));
    }

    // --- the pieces -----------------------------------------------------------------------------

    /** A restricted pod whose container {@code app} runs {@code script} with the agent's volume at /agent. */
    private static V1Pod pod(String name, String script, Map<String, String> attributes) {
        V1Container container = new V1Container().name("app").image("satoken.test/busybox:1")
                .command(List.of("sh", "-c", script))
                .securityContext(new V1SecurityContext().allowPrivilegeEscalation(false)
                        .capabilities(new V1Capabilities().drop(List.of("ALL"))))
                .addVolumeMountsItem(new V1VolumeMount().name("agent").mountPath("/agent").readOnly(true));
        V1PodSpec spec = new V1PodSpec().nodeName(node.nodeName()).serviceAccountName(SA)
                .automountServiceAccountToken(false).terminationGracePeriodSeconds(0L)
                .securityContext(new V1PodSecurityContext().runAsNonRoot(true).runAsUser(1000L).fsGroup(2000L)
                        .seccompProfile(new V1SeccompProfile().type("RuntimeDefault")))
                .addVolumesItem(new V1Volume().name("agent").csi(new V1CSIVolumeSource().driver(DRIVER).readOnly(true)
                        .volumeAttributes(attributes)))
                .addContainersItem(container);
        spec.setOverhead(null); // client-java sends "overhead": {} otherwise, which the API server refuses
        return new V1Pod().metadata(new V1ObjectMeta().name(name).namespace(namespace)).spec(spec);
    }

    private static String exec(RunningPod pod, String... command) throws IOException {
        ExecResult result = node.exec(pod.namespace(), pod.name(), "app", command);
        if (!result.succeeded()) {
            throw new AssertionError(String.join(" ", command) + " failed: " + result.stderr());
        }
        return result.stdout();
    }

    /** {@code explain} of a pod, in text. */
    private static String text(String pod) {
        return explain(pod, false);
    }

    /** The pod's volume's {@code reload} object in explain's JSON, or null. */
    private static JsonObject reload(String pod) {
        JsonObject dir = JsonParser.parseString(explain(pod, true)).getAsJsonObject().getAsJsonArray("directories")
                .get(0).getAsJsonObject();
        return dir.has("reload") ? dir.getAsJsonObject("reload") : null;
    }

    /** The pod's token file in explain's JSON. */
    private static JsonObject file(String pod) {
        return JsonParser.parseString(explain(pod, true)).getAsJsonObject().getAsJsonArray("directories").get(0)
                .getAsJsonObject().getAsJsonArray("files").get(0).getAsJsonObject();
    }

    private static String explain(String pod, boolean json) {
        List<String> command = json
                ? List.of(E2E.agentLauncher().toString(), "explain", "--config", csi.agentConfig().toString(),
                        "--output", "json", namespace + "/" + pod)
                : List.of(E2E.agentLauncher().toString(), "explain", "--config", csi.agentConfig().toString(),
                        namespace + "/" + pod);
        try {
            Commands.Result result = Commands.run("reload-explain-" + pod, command, Duration.ofSeconds(60));
            assertThat(result.exit()).as(result.output()).isZero();
            assertThat(result.output()).doesNotContainPattern(IssuedTokens.JWT_SHAPE);
            return result.output();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError(e);
        }
    }

    /** The message of the pod's first Event with that reason, or null. */
    private static String event(String pod, String reason) {
        try {
            List<CoreV1Event> events = new CoreV1Api(node.adminClient()).listNamespacedEvent(namespace)
                    .fieldSelector("involvedObject.name=" + pod).execute().getItems();
            return events.stream().filter(e -> reason.equals(e.getReason())).map(CoreV1Event::getMessage)
                    .filter(Objects::nonNull).findFirst().orElse(null);
        } catch (ApiException e) {
            return null;
        }
    }

    private static void awaitTrue(String what, Duration timeout, java.util.function.BooleanSupplier condition) {
        CsiDriverNode.awaitTrue(what, timeout, condition);
    }

    /** As {@link #awaitTrue}, polling once a second: each explain starts a JVM. */
    private static void awaitExplain(String what, Duration timeout, java.util.function.BooleanSupplier condition) {
        Instant deadline = Instant.now().plus(timeout);
        while (!condition.getAsBoolean()) {
            if (Instant.now().isAfter(deadline)) {
                throw new AssertionError("timed out after " + timeout.toSeconds() + " s waiting until " + what);
            }
            SatokenProcess.pause(Duration.ofSeconds(1));
        }
    }
}
