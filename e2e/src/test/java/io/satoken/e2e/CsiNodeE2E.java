package io.satoken.e2e;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.google.gson.JsonObject;
import com.google.gson.JsonParser;
import com.nimbusds.jwt.JWTClaimsSet;
import com.nimbusds.jwt.SignedJWT;
import io.kubernetes.client.openapi.ApiException;
import io.kubernetes.client.openapi.apis.CoreV1Api;
import io.kubernetes.client.openapi.models.CoreV1Event;
import io.kubernetes.client.openapi.models.V1CSIVolumeSource;
import io.kubernetes.client.openapi.models.V1Capabilities;
import io.kubernetes.client.openapi.models.V1Container;
import io.kubernetes.client.openapi.models.V1HostPathVolumeSource;
import io.kubernetes.client.openapi.models.V1ObjectMeta;
import io.kubernetes.client.openapi.models.V1Pod;
import io.kubernetes.client.openapi.models.V1PodSecurityContext;
import io.kubernetes.client.openapi.models.V1PodSpec;
import io.kubernetes.client.openapi.models.V1ProjectedVolumeSource;
import io.kubernetes.client.openapi.models.V1SeccompProfile;
import io.kubernetes.client.openapi.models.V1SecurityContext;
import io.kubernetes.client.openapi.models.V1ServiceAccountTokenProjection;
import io.kubernetes.client.openapi.models.V1TokenReviewStatus;
import io.kubernetes.client.openapi.models.V1Volume;
import io.kubernetes.client.openapi.models.V1VolumeMount;
import io.kubernetes.client.openapi.models.V1VolumeProjection;
import io.satoken.e2e.node.ExecResult;
import io.satoken.e2e.node.KubeletNode;
import io.satoken.e2e.node.RunningPod;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.function.BooleanSupplier;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.parallel.Execution;
import org.junit.jupiter.api.parallel.ExecutionMode;
import org.junit.jupiter.api.parallel.ResourceLock;

/**
 * The agent as the CSI driver of a real kubelet: real pods in a namespace that enforces the {@code restricted}
 * Pod Security level get their tokens through the kubelet's mount of the agent's tmpfs, side by side with
 * kubelet's own projected token; pods that ask for a reload signal get it after each rotation.
 *
 * <p>One node and one agent for the whole class, and the steps build on each other, in order: (a) the
 * restricted pod reads a token the API server accepts, bound to it; (c) compared with kubelet's token in the
 * same pod; (f) another pod reaches nothing of the first one's; (g) bad attributes, and a read-write volume,
 * reach the pod's Events;
 * (h) two more pods start, one reading its token once, one re-reading it every 5 s; (e) the agent is killed and
 * restarted with no TokenRequest for the tokens it holds; (j) in a second namespace, bad reload attributes reach
 * the pods' Events, and two pods ask for {@code reloadSignal: SIGHUP}: one's shell re-reads its token on SIGHUP
 * ({@code trap 'cat ...' HUP}), the other's ignores it ({@code trap '' HUP}); (b) both tokens rotate in the running
 * container, the agent's after that restart (so refreshing resumed); (i) the pod that read its token once, before
 * the restart, gets a {@code TokenNotReread} Event at 90 % of the old token's lifetime (the restarted agent knew
 * the file had a reader from the volume's record), the re-reader none, and {@code explain} tells them apart;
 * (k) after the rotation the agent signals each SIGHUP pod once the new token is in place; the re-reader opens it
 * within a second and explain says "re-read at", with no Event; (l) the ignorer stays on its old token: explain
 * says "not re-read", and at 90 % of the old token's lifetime it gets a {@code TokenNotReread} Event saying it was
 * signalled, and a {@code TokenExpiringUnread} Event (the default margin, 5 minutes, is already reached then);
 * (d) deleting the pod unmounts and removes everything.
 *
 * <p>The tokens live 600 s, the API server's minimum, and no test-only setting shortens it: the class waits about
 * ten minutes, once, for every rotation. The agent's metrics count every pod on the node, so the steps that read
 * them run in an order that keeps each count to its own pods: the SIGHUP pods start after the restart (e), their
 * tokens {@link #READER_GAP} after {@code once}'s, so the ignorer is reported after (i) has counted {@code once};
 * (l) deletes the SIGHUP pods before (d) counts the volumes left. The steps of (j), (k) and (l) are tagged
 * {@value #RELOAD_SIGNALS}: the second tier runs the class without them.
 */
@Execution(ExecutionMode.CONCURRENT) // waits ~10 min for rotations; see junit-platform.properties
@Order(1) // first to the node: see junit-platform.properties
@ResourceLock(KubeletNode.RESOURCE)
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class CsiNodeE2E {

    private static final String TEST = "CsiNodeE2E";
    private static final String DRIVER = "tokens.satoken.io";
    private static final String AUDIENCE = "vault";
    private static final long LIFETIME = 600;
    private static final String SA = "app";
    private static final long USER = 1000;
    private static final long FS_GROUP = 2000;
    /** The tag of the reload-signal steps (j), (k), (l). */
    static final String RELOAD_SIGNALS = "reload-signals";
    /** How much later than {@code once}'s the SIGHUP pods' tokens are issued, at least; see the class comment. */
    private static final Duration READER_GAP = Duration.ofSeconds(90);

    private static CsiDriverNode csi;
    private static KubeletNode node;
    private static SatokenProcess agent;
    private static String namespace;
    private static RunningPod app;
    private static String firstAgentToken;
    private static String firstKubeletToken;
    private static double issuedBeforeRestart;
    private static RunningPod once;
    private static RunningPod rereader;
    private static Instant onceIssued;
    private static Instant onceExpiry;
    private static String reloadNamespace;
    private static RunningPod signalRereader;
    private static RunningPod ignorer;
    private static Instant reloadIssued;

    @BeforeAll
    static void startNodeAndAgent() throws Exception {
        csi = CsiDriverNode.start(TEST, "csi-node-agent");
        node = csi.node();
        agent = csi.agent();

        namespace = csi.restrictedNamespace("csi", SA);
    }

    @AfterAll
    static void stop() throws IOException {
        if (csi != null) {
            csi.close();
        }
    }

    // (a)
    @Test
    @Order(1)
    void restrictedPod_readsAnAgentTokenTheApiServerAccepts_boundToThePod() throws Exception {
        Instant created = Instant.now();
        app = node.runPod(namespace, pod("app", csiVolume(Map.of("audience", AUDIENCE,
                "expirationSeconds", String.valueOf(LIFETIME))), true), Duration.ofSeconds(90));
        firstAgentToken = read(app, "/agent/token");
        firstKubeletToken = read(app, "/kubelet/token");
        Duration readable = Duration.between(created, Instant.now());

        V1TokenReviewStatus review = ApiChecks.review(node.apiServer(), firstAgentToken, AUDIENCE);
        assertThat(review.getAuthenticated()).as("TokenReview of the agent's token for %s", AUDIENCE).isTrue();
        assertThat(review.getUser().getUsername()).isEqualTo("system:serviceaccount:" + namespace + ":" + SA);
        assertThat(review.getUser().getExtra()).containsEntry("authentication.kubernetes.io/pod-name", List.of("app"))
                .containsEntry("authentication.kubernetes.io/pod-uid", List.of(app.uid()));
        assertThat(review.getAudiences()).containsExactly(AUDIENCE);

        Figures.record(TEST, String.format(Locale.ROOT, "restricted pod: created -> Running %d ms, -> both tokens "
                + "read in the container %d ms; the kubelet starts containers only after every volume is set up, "
                + "so the agent's token was readable no later than kubelet's", app.createdToRunning().toMillis(),
                readable.toMillis()));
        double publishes = agent.metric("satoken_csi_publish_seconds_count", "result=\"success\"");
        double publishSeconds = agent.metric("satoken_csi_publish_seconds_sum", "result=\"success\"");
        Figures.record(TEST, String.format(Locale.ROOT, "NodePublishVolume: %.0f call(s), mean %.0f ms from the "
                + "kubelet's call to the token written", publishes, 1000 * publishSeconds / publishes));
    }

    // (c)
    @Test
    @Order(2)
    void agentToken_matchesKubeletsProjectedToken_inLayoutModesOwnersAndClaims() throws Exception {
        String agentLayout = layout(app, "/agent");
        String kubeletLayout = layout(app, "/kubelet");
        // The same entries, each of the same kind (AW-1, AW-2, AW-4). The directories' modes differ, and are
        // recorded: kubelet's tmpfs root is 1777 plus the setgid bit of fsGroup ownership, the agent's is 0751 in fsGroup.
        assertThat(withoutModes(agentLayout)).as("agent's volume vs kubelet's").isEqualTo(withoutModes(kubeletLayout));
        String agentFile = exec(app, "stat", "-L", "-c", "%a %u:%g", "/agent/token").strip();
        String kubeletFile = exec(app, "stat", "-L", "-c", "%a %u:%g", "/kubelet/token").strip();
        // PV-16..PV-18: every container runs as 1000 and the pod has fsGroup 2000, so 0640 1000:2000
        assertThat(agentFile).isEqualTo(kubeletFile).isEqualTo("640 " + USER + ":" + FS_GROUP);

        JWTClaimsSet ours = SignedJWT.parse(firstAgentToken).getJWTClaimsSet();
        JWTClaimsSet theirs = SignedJWT.parse(firstKubeletToken).getJWTClaimsSet();
        assertThat(ours.getIssuer()).isEqualTo(theirs.getIssuer());
        assertThat(ours.getSubject()).isEqualTo(theirs.getSubject());
        assertThat(ours.getAudience()).isEqualTo(theirs.getAudience()).containsExactly(AUDIENCE);
        assertThat(ours.getJSONObjectClaim("kubernetes.io")).isEqualTo(theirs.getJSONObjectClaim("kubernetes.io"));
        assertThat(JwtClaims.of(firstAgentToken).lifetime()).isEqualTo(JwtClaims.of(firstKubeletToken).lifetime())
                .isEqualTo(Duration.ofSeconds(LIFETIME));
        Figures.record(TEST, "side by side with kubelet's projected token: same entries (agent: "
                + agentLayout.replace("\n", "; ") + " | kubelet: " + kubeletLayout.replace("\n", "; ")
                + "), same file " + agentFile + ", same iss/sub/aud/kubernetes.io claims and " + LIFETIME + " s lifetime");
    }

    // (f)
    @Test
    @Order(3)
    void anotherPod_reachesNoneOfTheFirstPodsTokens_throughAnyVolumeRestrictedAllows() throws Exception {
        // It may name another pod in its attributes: the kubelet's pod info overrides them.
        RunningPod other = node.runPod(namespace, pod("other", csiVolume(Map.of("audience", AUDIENCE,
                "csi.storage.k8s.io/pod.name", "app", "csi.storage.k8s.io/pod.uid", app.uid())), false),
                Duration.ofSeconds(90));
        String token = read(other, "/agent/token");
        V1TokenReviewStatus review = ApiChecks.review(node.apiServer(), token, AUDIENCE);
        assertThat(review.getUser().getExtra()).as("the other pod's token is bound to the other pod")
                .containsEntry("authentication.kubernetes.io/pod-uid", List.of(other.uid()));
        assertThat(token).isNotEqualTo(firstAgentToken);

        Path appTarget = node.rootDir().resolve("pods").resolve(app.uid());
        ExecResult look = node.exec(namespace, "other", "app", "ls", appTarget.toString());
        assertThat(look.exitCode()).as("the first pod's kubelet directory seen from the other pod").isNotZero();

        V1Pod hostPath = pod("thief", new V1Volume().name("agent").hostPath(new V1HostPathVolumeSource()
                .path(node.rootDir().resolve("pods").toString())), false);
        assertThatThrownBy(() -> new CoreV1Api(node.adminClient()).createNamespacedPod(namespace, hostPath).execute())
                .isInstanceOfSatisfying(ApiException.class, e -> {
                    assertThat(e.getCode()).isEqualTo(403);
                    assertThat(e.getResponseBody()).contains("restricted", "hostPath");
                });
        Figures.record(TEST, "another restricted pod: its token is bound to itself even when its attributes name "
                + "the first pod; the first pod's directory is not in its filesystem; a hostPath pod is refused (403)");
    }

    // (g)
    @Test
    @Order(4)
    void invalidAttributes_andAWritableVolume_areFailedMountEventsNamingTheField() throws Exception {
        V1Pod bad = pod("bad", csiVolume(Map.of("expirationSeconds", "60")), false);
        new CoreV1Api(node.adminClient()).createNamespacedPod(namespace, bad).execute();
        // A pod that sets neither csi.readOnly nor volumeMounts[].readOnly: uid 0 in it could write in the volume.
        V1Pod writable = pod("writable", csiVolume(Map.of("audience", AUDIENCE)), false);
        writable.getSpec().getVolumes().get(0).getCsi().setReadOnly(null);
        writable.getSpec().getContainers().get(0).getVolumeMounts().get(0).setReadOnly(null);
        new CoreV1Api(node.adminClient()).createNamespacedPod(namespace, writable).execute();
        String[] message = new String[2];
        awaitTrue("FailedMount Events on pods bad and writable", Duration.ofSeconds(60), () -> {
            message[0] = failedMount("bad");
            message[1] = failedMount("writable");
            return message[0] != null && message[1] != null;
        });
        assertThat(message[0]).contains("volumeAttributes.expirationSeconds", "10 minutes", "60");
        assertThat(message[1]).contains("csi.readOnly", "must be true");
        Figures.record(TEST, "invalid attribute: FailedMount Event \"" + message[0].replaceAll("\\s+", " ") + "\"");
        Figures.record(TEST, "writable volume: FailedMount Event \"" + message[1].replaceAll("\\s+", " ") + "\"");
        new CoreV1Api(node.adminClient()).deleteNamespacedPod("bad", namespace).gracePeriodSeconds(0).execute();
        new CoreV1Api(node.adminClient()).deleteNamespacedPod("writable", namespace).gracePeriodSeconds(0).execute();
    }

    // (h)
    @Test
    @Order(5)
    void readerPods_oneReadingItsTokenOnce_oneRereading_bothRunning() throws Exception {
        Map<String, String> attributes = Map.of("audience", AUDIENCE, "expirationSeconds", String.valueOf(LIFETIME));
        once = node.runPod(namespace, readerPod("once", "cat /agent/token >/dev/null; exec sleep 86400", attributes),
                Duration.ofSeconds(90));
        rereader = node.runPod(namespace, readerPod("rereader",
                "while true; do cat /agent/token >/dev/null; sleep 5; done", attributes), Duration.ofSeconds(90));
        // the test's own read is once's second and last: it held this token and never opens the file again. Both
        // reads come before the agent's restart, so only the volume's record tells the new agent about them
        onceExpiry = JwtClaims.of(read(once, "/agent/token")).expiresAt();
        onceIssued = onceExpiry.minusSeconds(LIFETIME);
        awaitTrue("explain shows a read by the re-reader", Duration.ofSeconds(30),
                () -> explain("rereader").output().contains("of the token now in the file"));
    }

    // (e)
    @Test
    @Order(6)
    void agentRestart_requestsNoTokenItStillHolds_andTheVolumesStayPublished() throws Exception {
        double issued = agent.metric("satoken_token_requests_total", "result=\"success\"");
        issuedBeforeRestart = issued;
        double serverBefore = ApiServerMetrics.tokenRequests(node.apiServer(), "201");
        agent = csi.restartAgent("csi-node-agent-restarted");
        SatokenProcess.pause(Duration.ofSeconds(20));
        double after = agent.metric("satoken_token_requests_total", "result=\"success\"");
        double serverAfter = ApiServerMetrics.tokenRequests(node.apiServer(), "201");
        assertThat(after).as("TokenRequests by the restarted agent").isZero();
        assertThat(serverAfter - serverBefore).as("TokenRequests the API server answered 201 after the restart")
                .isZero();
        assertThat(agent.metric("satoken_csi_volumes")).as("volumes resumed").isEqualTo(4.0);
        assertThat(read(app, "/agent/token")).isEqualTo(firstAgentToken);
        Figures.record(TEST, String.format(Locale.ROOT, "agent SIGKILLed and restarted with 4 volumes published "
                + "(%.0f tokens issued before): 0 TokenRequests in the 20 s after, all 4 volumes resumed", issued));
    }

    // (j), and the two SIGHUP pods started
    @Test
    @Order(7)
    @Tag(RELOAD_SIGNALS)
    void badReloadAttributes_areFailedMountEventsNamingTheAttribute_andTwoSignalledPodsStart() throws Exception {
        reloadNamespace = csi.restrictedNamespace("reload", SA);
        Map<String, String> sighup = Map.of("audience", AUDIENCE, "expirationSeconds", String.valueOf(LIFETIME),
                "reloadSignal", "SIGHUP");
        CoreV1Api core = new CoreV1Api(node.adminClient());
        core.createNamespacedPod(reloadNamespace, reloadPod("badsignal", "sleep 86400",
                Map.of("reloadSignal", "SIGKILL"))).execute();
        core.createNamespacedPod(reloadNamespace, reloadPod("badcontainer", "sleep 86400",
                Map.of("reloadSignal", "SIGHUP", "reloadContainer", "sidecar"))).execute();
        if (onceIssued != null) { // the ignorer is to be reported after once: see the class comment
            Duration early = Duration.between(Instant.now(), onceIssued.plus(READER_GAP));
            if (!early.isNegative()) {
                SatokenProcess.pause(early);
            }
        }
        signalRereader = node.runPod(reloadNamespace, reloadPod("rereader", "trap 'cat /agent/token >/dev/null' HUP; "
                + "cat /agent/token >/dev/null; while true; do sleep 1; done", sighup), Duration.ofSeconds(90));
        ignorer = node.runPod(reloadNamespace, reloadPod("ignorer", "trap '' HUP; cat /agent/token >/dev/null; "
                + "while true; do sleep 1; done", sighup), Duration.ofSeconds(90));
        String firstToken = IssuedTokens.record(exec(ignorer, "cat", "/agent/token").strip());
        reloadIssued = JwtClaims.of(firstToken).issuedAt();

        String[] message = new String[2];
        awaitTrue("FailedMount Events on badsignal and badcontainer", Duration.ofSeconds(60), () -> {
            message[0] = warning(reloadNamespace, "badsignal", "FailedMount");
            message[1] = warning(reloadNamespace, "badcontainer", "FailedMount");
            return message[0] != null && message[1] != null;
        });
        assertThat(message[0]).contains("volumeAttributes.reloadSignal", "SIGKILL", "must be one of SIGHUP");
        assertThat(message[1]).contains("volumeAttributes.reloadContainer", "\"sidecar\"", "its containers: app");
        Figures.record(TEST, "bad reloadSignal: FailedMount \"" + message[0].replaceAll("\\s+", " ") + "\"");
        Figures.record(TEST, "bad reloadContainer: FailedMount \"" + message[1].replaceAll("\\s+", " ") + "\"");
        core.deleteNamespacedPod("badsignal", reloadNamespace).gracePeriodSeconds(0).execute();
        core.deleteNamespacedPod("badcontainer", reloadNamespace).gracePeriodSeconds(0).execute();
        awaitExplain("explain shows the ignorer's read", Duration.ofSeconds(30),
                () -> reloadText("ignorer").contains("of the token now in the file"));
        assertThat(reloadText("rereader")).contains("SIGHUP to container app after each rotation; none sent yet");
    }

    // (b)
    @Test
    @Order(8)
    void bothTokens_rotateInTheRunningContainer_theAgentsAfterItsRestart() throws Exception {
        Instant issued = JwtClaims.of(firstAgentToken).issuedAt();
        Instant kubeletIssued = JwtClaims.of(firstKubeletToken).issuedAt();
        Instant deadline = JwtClaims.of(firstAgentToken).expiresAt().plusSeconds(30);
        Instant agentRotated = null;
        Instant kubeletRotated = null;
        while ((agentRotated == null || kubeletRotated == null) && Instant.now().isBefore(deadline)) {
            if (agentRotated == null && !read(app, "/agent/token").equals(firstAgentToken)) {
                agentRotated = Instant.now();
            }
            if (kubeletRotated == null && !read(app, "/kubelet/token").equals(firstKubeletToken)) {
                kubeletRotated = Instant.now();
            }
            SatokenProcess.pause(Duration.ofSeconds(2));
        }
        assertThat(agentRotated).as("the agent's token rotated before the first one expired").isNotNull();
        assertThat(kubeletRotated).as("kubelet's token rotated before the first one expired").isNotNull();
        String rotated = read(app, "/agent/token");
        assertThat(ApiChecks.review(node.apiServer(), rotated, AUDIENCE).getAuthenticated()).isTrue();
        V1Pod now = new CoreV1Api(node.adminClient()).readNamespacedPod("app", namespace).execute();
        assertThat(now.getStatus().getContainerStatuses().get(0).getRestartCount()).as("container restarts").isZero();
        Figures.record(TEST, String.format(Locale.ROOT, "rotation seen in the running container (no restart): the "
                + "agent's at %.0f %% of the %d s lifetime (after its restart), kubelet's at %.0f %% (at a pod sync)",
                percent(issued, agentRotated), LIFETIME, percent(kubeletIssued, kubeletRotated)));
    }

    // (i)
    @Test
    @Order(9)
    void containerThatReadItsTokenOnce_getsTokenNotReread_theRereaderNone_andExplainTellsThemApart()
            throws Exception {
        Instant due = onceIssued.plusSeconds(LIFETIME * 9 / 10);
        String[] message = new String[1];
        awaitTrue("a TokenNotReread Event on pod once", Duration.between(Instant.now(), due).plusSeconds(90), () -> {
            message[0] = warning("once", "TokenNotReread");
            return message[0] != null;
        });
        Instant seen = Instant.now();
        assertThat(message[0]).contains("token file \"token\"", "volume \"agent\"", onceExpiry.toString());
        // whole seconds in the token's times; the test sees the Event up to a poll after it is sent
        assertThat(seen).as("not before 90 %% of the old token's lifetime").isAfterOrEqualTo(due.minusSeconds(1));
        assertThat(warning("rereader", "TokenNotReread")).as("Event on the re-reader").isNull();
        assertThat(warning("app", "TokenNotReread")).as("Event on app, which the test read after its rotation").isNull();
        assertThat(agent.metric("satoken_token_not_reread_total")).isEqualTo(1.0);
        assertThat(agent.metric("satoken_token_files_not_reread")).isEqualTo(1.0);

        Commands.Result onceText = explain("once");
        assertThat(onceText.exit()).isZero();
        assertThat(onceText.output()).contains("Pod " + namespace + "/once (uid " + once.uid() + ")",
                "ServiceAccount: " + namespace + "/" + SA, "audiences:      " + AUDIENCE, "bound to:       Pod once",
                "the new token was not opened", "reported TokenNotReread");
        Commands.Result rereaderText = explain("rereader");
        assertThat(rereaderText.output()).contains("of the token now in the file").doesNotContain("TokenNotReread");
        Commands.Result json = Commands.run("csi-node-explain-json", List.of(E2E.agentLauncher().toString(), "explain",
                "--config", csi.agentConfig().toString(), "--output", "json", namespace + "/once"));
        JsonObject file = JsonParser.parseString(json.output()).getAsJsonObject().getAsJsonArray("directories").get(0)
                .getAsJsonObject().getAsJsonArray("files").get(0).getAsJsonObject();
        assertThat(file.get("readCurrentToken").getAsBoolean()).isFalse();
        assertThat(file.get("notRereadSince").isJsonNull()).isFalse();
        for (String output : List.of(onceText.output(), rereaderText.output(), json.output())) {
            assertThat(output).as("explain's output").doesNotContainPattern(IssuedTokens.JWT_SHAPE);
        }
        Figures.record(TEST, String.format(Locale.ROOT, "read once: TokenNotReread %.0f s after the token the pod "
                + "holds was issued (due at %d s, 90 %% of %d s); the re-reader and app got none; explain showed "
                + "both (text and JSON), no token in its output", Duration.between(onceIssued, seen).toMillis() / 1000.0,
                LIFETIME * 9 / 10, LIFETIME));

        for (String pod : List.of("once", "rereader")) {
            new CoreV1Api(node.adminClient()).deleteNamespacedPod(pod, namespace).gracePeriodSeconds(0).execute();
        }
        Path onceDir = node.rootDir().resolve("pods").resolve(once.uid());
        Path rereaderDir = node.rootDir().resolve("pods").resolve(rereader.uid());
        awaitTrue("the reader pods' directories are gone", Duration.ofSeconds(90),
                () -> !Files.exists(onceDir) && !Files.exists(rereaderDir));
        assertThat(agent.metric("satoken_token_files_not_reread")).as("after the pod is gone").isZero();
    }

    // (k)
    @Test
    @Order(10)
    @Tag(RELOAD_SIGNALS)
    void afterTheRotation_theHandlerOfSighup_rereadsItsTokenWithinASecond_andGetsNoEvent() throws Exception {
        Instant deadline = reloadIssued.plusSeconds(LIFETIME * 8 / 10 + 60);
        JsonObject[] reload = new JsonObject[1];
        awaitExplain("the re-reader is signalled after its token rotated", Duration.between(Instant.now(), deadline),
                () -> {
                    reload[0] = reloadState("rereader");
                    return reload[0] != null && !reload[0].get("signalledAt").isJsonNull();
                });
        Instant signalled = Instant.parse(reload[0].get("signalledAt").getAsString());
        assertThat(reload[0].get("delivered").getAsBoolean()).as(reload[0].toString()).isTrue();

        JsonObject[] file = new JsonObject[1];
        awaitExplain("the re-reader opens the new token", Duration.ofSeconds(10), () -> {
            file[0] = reloadFile("rereader");
            return file[0].get("readCurrentToken").getAsBoolean() && !file[0].get("lastRead").isJsonNull()
                    && !Instant.parse(file[0].get("lastRead").getAsString()).isBefore(signalled);
        });
        Duration latency = Duration.between(signalled, Instant.parse(file[0].get("lastRead").getAsString()));
        assertThat(latency).as("signal -> re-read").isLessThan(Duration.ofSeconds(3));
        assertThat(reloadText("rereader")).contains("signalled at", "re-read at");
        // only now does the test read the file itself: its own open would count as a re-read
        String rotated = IssuedTokens.record(exec(signalRereader, "cat", "/agent/token").strip());
        assertThat(JwtClaims.of(rotated).issuedAt()).as("the rotated token").isAfter(reloadIssued);
        assertThat(JwtClaims.of(rotated).issuedAt()).as("signalled after the new token was written")
                .isBeforeOrEqualTo(signalled.plusSeconds(1));
        assertThat(exec(signalRereader, "cat", "/proc/1/status")).as("the shell still runs").contains("State:");
        Instant written = Instant.parse(file[0].get("rotatedAt").getAsString());
        assertThat(signalled).as("signalled once the new token is in place").isAfterOrEqualTo(written);
        Figures.record(TEST, String.format(Locale.ROOT, "SIGHUP handler that re-reads: signalled %d ms after the new "
                + "token was written, re-read %d ms after the signal (the shell runs its trap when its 1 s sleep ends)",
                Duration.between(written, signalled).toMillis(), latency.toMillis()));
    }

    // (l)
    @Test
    @Order(11)
    @Tag(RELOAD_SIGNALS)
    void theContainerIgnoringSighup_showsSignalledNotReread_thenBothWarningEvents() throws Exception {
        JsonObject[] reload = new JsonObject[1];
        awaitExplain("the ignorer is signalled", Duration.ofSeconds(60), () -> {
            reload[0] = reloadState("ignorer");
            return reload[0] != null && !reload[0].get("signalledAt").isJsonNull();
        });
        assertThat(reload[0].get("delivered").getAsBoolean()).isTrue();
        SatokenProcess.pause(Duration.ofSeconds(3));
        assertThat(reloadText("ignorer")).contains("signalled at", "not re-read");

        Instant due = reloadIssued.plusSeconds(LIFETIME * 9 / 10);
        String[] message = new String[2];
        awaitTrue("TokenNotReread and TokenExpiringUnread on the ignorer",
                Duration.between(Instant.now(), due).plusSeconds(90), () -> {
                    message[0] = warning(reloadNamespace, "ignorer", "TokenNotReread");
                    message[1] = warning(reloadNamespace, "ignorer", "TokenExpiringUnread");
                    return message[0] != null && message[1] != null;
                });
        Instant seen = Instant.now();
        assertThat(message[0]).contains("The agent sent SIGHUP to container app", "it was signalled, and did not "
                + "re-read");
        assertThat(message[1]).contains("is still not opened", "expires at");
        assertThat(warning(reloadNamespace, "rereader", "TokenNotReread")).as("TokenNotReread on the re-reader")
                .isNull();
        assertThat(warning(reloadNamespace, "rereader", "TokenExpiringUnread")).as("TokenExpiringUnread on the "
                + "re-reader").isNull();
        assertThat(agent.metric("satoken_token_files_expiring_unread")).isEqualTo(1.0);
        assertThat(agent.metric("satoken_reload_signals_total", "result=\"delivered\"")).isEqualTo(2.0);
        assertThat(reloadText("ignorer")).contains("TokenNotReread at", "TokenExpiringUnread at");
        Figures.record(TEST, String.format(Locale.ROOT, "SIGHUP ignored: explain \"signalled, not re-read\"; "
                + "TokenNotReread (\"signalled, and did not re-read\") and TokenExpiringUnread %.0f s after the held "
                + "token was issued (due at %d s; the 300 s default margin is reached by then)",
                Duration.between(reloadIssued, seen).toMillis() / 1000.0, LIFETIME * 9 / 10));

        // (d) counts the volumes left: the SIGHUP pods go first
        for (String pod : List.of("rereader", "ignorer")) {
            new CoreV1Api(node.adminClient()).deleteNamespacedPod(pod, reloadNamespace).gracePeriodSeconds(0).execute();
        }
        Path rereaderDir = node.rootDir().resolve("pods").resolve(signalRereader.uid());
        Path ignorerDir = node.rootDir().resolve("pods").resolve(ignorer.uid());
        awaitTrue("the SIGHUP pods' directories are gone", Duration.ofSeconds(90),
                () -> !Files.exists(rereaderDir) && !Files.exists(ignorerDir));
    }

    // (d)
    @Test
    @Order(12)
    void deletingThePod_unpublishesTheVolume_andLeavesNothingOnTheNode() throws Exception {
        Path podDir = node.rootDir().resolve("pods").resolve(app.uid());
        Path records = node.rootDir().resolve("plugins").resolve(DRIVER).resolve("volumes");
        assertThat(mountsUnder(podDir)).as("tmpfs mounts of the pod before").hasSize(1);
        new CoreV1Api(node.adminClient()).deleteNamespacedPod("app", namespace).gracePeriodSeconds(0).execute();
        awaitTrue("the pod's directory is gone", Duration.ofSeconds(90), () -> !Files.exists(podDir));
        assertThat(mountsUnder(podDir)).as("tmpfs mounts of the pod after").isEmpty();
        assertThat(agent.metric("satoken_csi_volumes")).isEqualTo(1.0);
        try (Stream<Path> left = Files.list(records)) {
            assertThat(left.map(p -> p.getFileName().toString())).as("volume records").hasSize(1);
        }
        double requests = agent.metric("satoken_token_requests_total", "result=\"success\"");
        Figures.record(TEST, String.format(Locale.ROOT, "pod deleted: volume unpublished, tmpfs unmounted, pod "
                + "directory and record removed; TokenRequests: %.0f by the first agent for 4 pods' publishes, 0 at the "
                + "restart, %.0f by the restarted agent for the rotations seen so far (one per pod per token lifetime)"
                + "%s", issuedBeforeRestart, requests, reloadNamespace == null ? "" : " and the 2 SIGHUP pods' publishes"));
    }

    // --- the pieces -----------------------------------------------------------------------------

    /** A restricted pod whose container runs {@code script} with the agent's volume at /agent. */
    private static V1Pod readerPod(String name, String script, Map<String, String> attributes) {
        V1Pod pod = pod(name, csiVolume(attributes), false);
        pod.getSpec().getContainers().get(0).command(List.of("sh", "-c", script));
        return pod;
    }

    /** {@code satoken-agent explain} of a pod in the test's namespace, in text. */
    private static Commands.Result explain(String pod) {
        try {
            return Commands.run("csi-node-explain-" + pod, List.of(E2E.agentLauncher().toString(), "explain",
                    "--config", csi.agentConfig().toString(), namespace + "/" + pod), Duration.ofSeconds(60));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError(e);
        }
    }

    /** A restricted pod in the reload namespace whose container {@code app} runs {@code script}, the agent's volume at /agent. */
    private static V1Pod reloadPod(String name, String script, Map<String, String> attributes) {
        V1Pod pod = readerPod(name, script, attributes);
        pod.getMetadata().namespace(reloadNamespace);
        return pod;
    }

    /** {@code explain} of a pod in the reload namespace, in text. */
    private static String reloadText(String pod) {
        return reloadExplain(pod, false);
    }

    /** The reload namespace's pod's volume's {@code reload} object in explain's JSON, or null. */
    private static JsonObject reloadState(String pod) {
        JsonObject dir = JsonParser.parseString(reloadExplain(pod, true)).getAsJsonObject()
                .getAsJsonArray("directories").get(0).getAsJsonObject();
        return dir.has("reload") ? dir.getAsJsonObject("reload") : null;
    }

    /** The reload namespace's pod's token file in explain's JSON. */
    private static JsonObject reloadFile(String pod) {
        return JsonParser.parseString(reloadExplain(pod, true)).getAsJsonObject().getAsJsonArray("directories").get(0)
                .getAsJsonObject().getAsJsonArray("files").get(0).getAsJsonObject();
    }

    private static String reloadExplain(String pod, boolean json) {
        List<String> command = json
                ? List.of(E2E.agentLauncher().toString(), "explain", "--config", csi.agentConfig().toString(),
                        "--output", "json", reloadNamespace + "/" + pod)
                : List.of(E2E.agentLauncher().toString(), "explain", "--config", csi.agentConfig().toString(),
                        reloadNamespace + "/" + pod);
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

    /** As {@link #awaitTrue}, polling once a second: each explain starts a JVM. */
    private static void awaitExplain(String what, Duration timeout, BooleanSupplier condition) {
        Instant deadline = Instant.now().plus(timeout);
        while (!condition.getAsBoolean()) {
            if (Instant.now().isAfter(deadline)) {
                throw new AssertionError("timed out after " + timeout.toSeconds() + " s waiting until " + what);
            }
            SatokenProcess.pause(Duration.ofSeconds(1));
        }
    }

    private static V1Volume csiVolume(Map<String, String> attributes) {
        return new V1Volume().name("agent").csi(new V1CSIVolumeSource().driver(DRIVER).readOnly(true)
                .volumeAttributes(attributes));
    }

    /** A pod the restricted level admits: non-root 1000, fsGroup 2000, no capabilities, RuntimeDefault seccomp. */
    private static V1Pod pod(String name, V1Volume agentVolume, boolean withKubeletToken) {
        V1Container container = new V1Container().name("app").image("satoken.test/busybox:1")
                .command(List.of("sleep", "86400"))
                .securityContext(new V1SecurityContext().allowPrivilegeEscalation(false)
                        .capabilities(new V1Capabilities().drop(List.of("ALL"))))
                .addVolumeMountsItem(new V1VolumeMount().name("agent").mountPath("/agent").readOnly(true));
        V1PodSpec spec = new V1PodSpec().nodeName(node.nodeName()).serviceAccountName(SA)
                .automountServiceAccountToken(false).terminationGracePeriodSeconds(0L)
                .securityContext(new V1PodSecurityContext().runAsNonRoot(true).runAsUser(USER).fsGroup(FS_GROUP)
                        .seccompProfile(new V1SeccompProfile().type("RuntimeDefault")))
                .addVolumesItem(agentVolume);
        if (withKubeletToken) {
            container.addVolumeMountsItem(new V1VolumeMount().name("kubelet").mountPath("/kubelet").readOnly(true));
            spec.addVolumesItem(new V1Volume().name("kubelet").projected(new V1ProjectedVolumeSource()
                    .addSourcesItem(new V1VolumeProjection().serviceAccountToken(new V1ServiceAccountTokenProjection()
                            .audience(AUDIENCE).expirationSeconds(LIFETIME).path("token")))));
        }
        spec.addContainersItem(container);
        spec.setOverhead(null); // client-java sends "overhead": {} otherwise, which the API server refuses
        return new V1Pod().metadata(new V1ObjectMeta().name(name).namespace(namespace)).spec(spec);
    }

    /** The file's content as the container reads it; recorded so the secrets check looks for it in every log. */
    private static String read(RunningPod pod, String file) throws IOException {
        ExecResult result = node.exec(pod.namespace(), pod.name(), "app", "cat", file);
        if (!result.succeeded()) {
            throw new AssertionError("cat " + file + " in " + pod.name() + " failed (exit " + result.exitCode() + "): "
                    + result.stderr());
        }
        return IssuedTokens.record(result.stdout().strip());
    }

    private static String exec(RunningPod pod, String... command) throws IOException {
        ExecResult result = node.exec(pod.namespace(), pod.name(), "app", command);
        if (!result.succeeded()) {
            throw new AssertionError(String.join(" ", command) + " failed: " + result.stderr());
        }
        return result.stdout();
    }

    /**
     * A volume's entries as names and kinds, timestamps masked: {@code ..data -> ..<ts>}, {@code token ->
     * ..data/token}, the directory's mode.
     */
    private static String layout(RunningPod pod, String dir) throws IOException {
        String listing = exec(pod, "sh", "-c", "cd " + dir + " && for f in .* *; do "
                + "[ \"$f\" = . ] || [ \"$f\" = .. ] || echo \"$f $(stat -c '%F %a' \"$f\") $(readlink \"$f\")\"; done; "
                + "stat -c 'dir %a' .");
        return listing.lines().map(l -> l.replaceAll("\\.\\.\\d{4}_\\d{2}_\\d{2}_\\d{2}_\\d{2}_\\d{2}\\.\\d+", "..<ts>"))
                .sorted().reduce((a, b) -> a + "\n" + b).orElse("");
    }

    /** A layout line without its mode: {@code token symbolic link ..data/token}. */
    private static String withoutModes(String layout) {
        return layout.replaceAll(" \\d{3,4}\\b", "");
    }

    private static String failedMount(String pod) {
        return warning(pod, "FailedMount");
    }

    /** The message of the first Event with that reason of the pod in the test's namespace, or null. */
    private static String warning(String pod, String reason) {
        return warning(namespace, pod, reason);
    }

    /** The message of the pod's first Event with that reason, or null. */
    private static String warning(String podNamespace, String pod, String reason) {
        try {
            List<CoreV1Event> events = new CoreV1Api(node.adminClient()).listNamespacedEvent(podNamespace)
                    .fieldSelector("involvedObject.name=" + pod).execute().getItems();
            return events.stream().filter(e -> reason.equals(e.getReason())).map(CoreV1Event::getMessage)
                    .filter(Objects::nonNull).findFirst().orElse(null);
        } catch (ApiException e) {
            return null;
        }
    }

    /** The agent's tmpfs mounts (source {@value #DRIVER}) under {@code dir}. */
    private static List<String> mountsUnder(Path dir) throws IOException {
        return Files.readAllLines(Path.of("/proc/self/mountinfo")).stream()
                .filter(l -> l.contains(" - tmpfs " + DRIVER + " "))
                .map(l -> l.split(" ")[4])
                .filter(p -> p.startsWith(dir.toString())).toList();
    }

    private static double percent(Instant issued, Instant seen) {
        return 100.0 * Duration.between(issued, seen).toMillis() / (LIFETIME * 1000.0);
    }

    private static void awaitTrue(String what, Duration timeout, BooleanSupplier condition) {
        CsiDriverNode.awaitTrue(what, timeout, condition);
    }
}
