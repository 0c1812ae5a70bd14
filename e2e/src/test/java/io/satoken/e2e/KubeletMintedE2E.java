package io.satoken.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import com.nimbusds.jwt.JWTClaimsSet;
import com.nimbusds.jwt.SignedJWT;
import io.kubernetes.client.openapi.ApiException;
import io.kubernetes.client.openapi.apis.CoreV1Api;
import io.kubernetes.client.openapi.models.CoreV1Event;
import io.kubernetes.client.openapi.models.V1CSIVolumeSource;
import io.kubernetes.client.openapi.models.V1Capabilities;
import io.kubernetes.client.openapi.models.V1Container;
import io.kubernetes.client.openapi.models.V1EmptyDirVolumeSource;
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
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.parallel.Execution;
import org.junit.jupiter.api.parallel.ExecutionMode;
import org.junit.jupiter.api.parallel.ResourceLock;

/**
 * The kubelet-minted profile on a real node ({@code deploy/profiles/kubelet-minted}, {@code tokenSource: kubelet}):
 * the agent's ClusterRole has no {@code serviceaccounts/token} right at all, and the kubelet mints every token and
 * hands it over at each NodePublishVolume, in {@code volume_context} before 1.35 and in {@code secrets} from 1.35
 * (the Component {@code tokens-in-secrets}). A restricted pod holds the agent's volume and kubelet's projected token
 * of the same audience and lifetime; its container reads the agent's file in a loop from the start, counting reads
 * that are not a whole token, until the kubelet's rotation has been written.
 *
 * <p>Steps, in order: (a) the pod reads a token the API server accepts, bound to it, and the agent says which field
 * the kubelet used and made no TokenRequest; (b) its claims are those of kubelet's projected token, apart from
 * iat, nbf, exp and jti; (c) a volume asking for an audience the CSIDriver does not list fails with a FailedMount
 * naming the list; (d) an agent restart leaves the files untouched; (e) {@link AccessParityE2E}'s shapes read the
 * agent's file exactly when they read kubelet's, with its mode and owner; (f) the kubelet's rotation, ~80 % into
 * the 600 s lifetime (the CSIDriver's minimum), is seen by the reader with no torn read; (g) no agent log holds a
 * token. The rotation is the only long wait (~8 to 10 min); the other steps run inside it, and the class runs beside
 * the classes that need no node. The second tier skips (f): the rotation is the agent's atomic switch, the same on
 * every version, and it costs the tier's one-kubelet chain ten minutes.
 */
@Execution(ExecutionMode.CONCURRENT) // waits ~10 min for a rotation; see junit-platform.properties
@Order(Order.DEFAULT + 1) // last to the node: see junit-platform.properties
@ResourceLock(KubeletNode.RESOURCE)
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class KubeletMintedE2E {

    /** The rotation wait, (f): the second tier runs the class without it (e2e/pom.xml, profile kube-next). */
    static final String ROTATION = "kubelet-minted-rotation";

    private static final String TEST = "KubeletMintedE2E";
    private static final String AGENT = "kubelet-minted-agent";
    private static final String DRIVER = CsiDriverNode.DRIVER;
    /** AccessParityE2E's audience, lifetime and ServiceAccount: its pods run on this node too, (e). */
    private static final String AUDIENCE = AccessParityE2E.AUDIENCE;
    private static final long LIFETIME = AccessParityE2E.LIFETIME;
    private static final String SA = AccessParityE2E.SA;
    private static final long USER = 1000;
    private static final long FS_GROUP = 2000;

    private static CsiDriverNode csi;
    private static KubeletNode node;
    private static String namespace;
    private static boolean inSecrets;
    private static RunningPod app;
    private static String firstToken;
    private static String kubeletToken;

    @BeforeAll
    static void startNodeAndPod() throws Exception {
        csi = CsiDriverNode.startKubeletMinted(TEST, AGENT, AUDIENCE, LIFETIME);
        node = csi.node();
        inSecrets = CsiDriverNode.apiMinor(node) >= 35;
        namespace = csi.restrictedNamespace("minted", SA);
        // the reader starts with the pod, so it sees every version of the file the agent writes
        app = node.runPod(namespace, pod("app", Map.of("audience", AUDIENCE,
                "expirationSeconds", String.valueOf(LIFETIME)), true), Duration.ofSeconds(90));
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
    void restrictedPod_readsTheKubeletsToken_boundToIt_deliveredInTheFieldOfItsVersion() throws Exception {
        firstToken = read(app, "/agent/token");
        kubeletToken = read(app, "/kubelet/token");

        V1TokenReviewStatus review = ApiChecks.review(node.apiServer(), firstToken, AUDIENCE);
        assertThat(review.getAuthenticated()).as("TokenReview of the agent's token for %s", AUDIENCE).isTrue();
        assertThat(review.getUser().getUsername()).isEqualTo("system:serviceaccount:" + namespace + ":" + SA);
        assertThat(review.getUser().getExtra()).containsEntry("authentication.kubernetes.io/pod-uid",
                List.of(app.uid()));
        String via = inSecrets ? "secrets" : "volume_context";
        assertThat(agentLogs()).as("the agent names the field the kubelet used")
                .contains("from the kubelet, in " + via)
                .doesNotContain("from the kubelet, in " + (inSecrets ? "volume_context" : "secrets"));
        assertThat(csi.agent().metrics()).as("the agent made no TokenRequest")
                .doesNotContainPattern("satoken_token_requests_total\\{[^}]*\\} [1-9]");
        Figures.record(TEST, String.format(Locale.ROOT, "API server 1.%d: the kubelet delivered the tokens in %s;"
                + " the agent made 0 TokenRequests", CsiDriverNode.apiMinor(node), via));
    }

    // (b)
    @Test
    @Order(2)
    void claims_areThoseOfKubeletsProjectedToken_apartFromTheTimesAndId() throws Exception {
        Map<String, Object> ours = new HashMap<>(SignedJWT.parse(firstToken).getJWTClaimsSet().getClaims());
        Map<String, Object> theirs = new HashMap<>(SignedJWT.parse(kubeletToken).getJWTClaimsSet().getClaims());
        assertThat(ours).as("the agent's token's claims").containsKeys("iat", "nbf", "exp");
        for (String timeOrId : List.of("iat", "nbf", "exp", "jti")) { // jti from 1.29 on
            ours.remove(timeOrId);
            theirs.remove(timeOrId);
        }
        assertThat(ours).isEqualTo(theirs);
        JWTClaimsSet claims = SignedJWT.parse(firstToken).getJWTClaimsSet();
        assertThat(claims.getAudience()).containsExactly(AUDIENCE);
        assertThat(JwtClaims.of(firstToken).lifetime()).isEqualTo(Duration.ofSeconds(LIFETIME));
        assertThat(exec(app, "stat", "-L", "-c", "%a %u:%g", "/agent/token").strip())
                .isEqualTo(exec(app, "stat", "-L", "-c", "%a %u:%g", "/kubelet/token").strip())
                .isEqualTo("640 " + USER + ":" + FS_GROUP);
        Figures.record(TEST, "claims equal kubelet's projected token's apart from iat/nbf/exp/jti"
                + (firstToken.equals(kubeletToken) ? " (the kubelet handed over the very token it projected: its"
                        + " token cache shares a token between requests of the same key)" : ""));
    }

    // (c)
    @Test
    @Order(3)
    void unlistedAudience_isAFailedMountNamingTheListedAudiences() throws Exception {
        V1Pod pod = pod("unlisted", Map.of("audience", "sts"), false);
        new CoreV1Api(node.adminClient()).createNamespacedPod(namespace, pod).execute();
        String[] message = new String[1];
        CsiDriverNode.awaitTrue("a FailedMount Event on pod unlisted", Duration.ofSeconds(90),
                () -> (message[0] = warning("unlisted", "FailedMount")) != null);
        assertThat(message[0]).contains("volumeAttributes.audience: \"sts\"").contains("[\"" + AUDIENCE + "\"]")
                .contains("tokenRequests");
        assertThat(message[0]).doesNotContainPattern(IssuedTokens.JWT_SHAPE);
        Figures.record(TEST, "unlisted audience: FailedMount \"" + message[0].replaceAll("\\s+", " ") + "\"");
    }

    // (d)
    @Test
    @Order(4)
    void agentRestart_leavesTheFilesUntouched_andAdoptsTheToken() throws Exception {
        String version = exec(app, "readlink", "/agent/..data").strip();
        String token = read(app, "/agent/token");
        int logsBefore = agentLogFiles().size();
        SatokenProcess restarted = csi.restartAgent(AGENT + "-restarted");
        assertThat(restarted.logText()).contains("adopted 1 of 1 token(s)");
        // the kubelet republishes every volume every minute or two: the first republish after the restart
        CsiDriverNode.awaitTrue("the restarted agent got the kubelet's token", Duration.ofSeconds(180),
                () -> restarted.logText().contains("from the kubelet, in"));
        assertThat(exec(app, "readlink", "/agent/..data").strip()).as("..data after the restart").isEqualTo(version);
        assertThat(read(app, "/agent/token")).isEqualTo(token);
        assertThat(agentLogFiles()).hasSizeGreaterThan(logsBefore);
    }

    // (e)
    @Test
    @Order(5)
    void accessParity_withKubeletsProjectedToken_holdsInThisMode() throws Exception {
        // AccessParityE2E's pods, on this node, while the rotation is awaited: its audience and lifetime are ours
        AccessParityE2E.check(TEST + "-parity", node, csi.namespace("parity", Map.of(), SA));
    }

    // (f)
    @Test
    @Order(6)
    @Tag(ROTATION)
    void rotation_isSeenByTheReader_withNoTornRead() throws Exception {
        Instant issued = JwtClaims.of(firstToken).issuedAt();
        Instant deadline = JwtClaims.of(firstToken).expiresAt().plusSeconds(30);
        Instant rotated = null;
        while (rotated == null && Instant.now().isBefore(deadline)) {
            // the kubelet's refresh, not a second token it may hand over just after the first publish (seen on 1.36)
            if (JwtClaims.of(read(app, "/agent/token")).issuedAt().isAfter(issued.plusSeconds(LIFETIME / 2))) {
                rotated = Instant.now();
            } else {
                SatokenProcess.pause(Duration.ofSeconds(2));
            }
        }
        assertThat(rotated).as("the kubelet's new token written before the first one expired").isNotNull();
        String next = read(app, "/agent/token");
        assertThat(ApiChecks.review(node.apiServer(), next, AUDIENCE).getAuthenticated()).isTrue();
        assertThat(JwtClaims.of(next).issuedAt()).isAfter(issued);
        SatokenProcess.pause(Duration.ofSeconds(3)); // a few more reads of the new version
        String[] counts = exec(app, "cat", "/work/counts").strip().split(" ");
        long reads = Long.parseLong(counts[0]);
        long torn = Long.parseLong(counts[1]);
        long versions = Long.parseLong(counts[2]);
        assertThat(torn).as("reads that were not a whole token, of %d", reads).isZero();
        assertThat(versions).as("token versions the reader saw").isGreaterThanOrEqualTo(2);
        assertThat(agentLogs()).contains("not the one(s) this agent serves yet");
        Figures.record(TEST, "the kubelet handed over " + agentLogs().lines().filter(l -> l.contains("pod " + namespace
                + "/app ") && l.contains("not the one(s) this agent serves yet")).count() + " distinct token(s) to the"
                + " agents of pod app (one line per token new to an agent, the restarted one's first included)");
        V1Pod now = new CoreV1Api(node.adminClient()).readNamespacedPod("app", namespace).execute();
        assertThat(now.getStatus().getContainerStatuses().get(0).getRestartCount()).as("container restarts").isZero();
        Figures.record(TEST, String.format(Locale.ROOT, "kubelet's rotation written at %.0f %% of the %d s lifetime;"
                + " the reader saw %d versions in %d reads, %d torn", 100.0 * Duration.between(issued, rotated)
                .toMillis() / (LIFETIME * 1000.0), LIFETIME, versions, reads, torn));
    }

    // (g)
    @Test
    @Order(7)
    void noAgentLog_holdsATokenOrAJwtShapedString() throws Exception {
        List<String> tokens = IssuedTokens.all();
        for (Path log : agentLogFiles()) {
            String text = Files.readString(log, StandardCharsets.ISO_8859_1);
            assertThat(text).as(log.toString()).doesNotContainPattern(IssuedTokens.JWT_SHAPE);
            for (String token : tokens) {
                assertThat(text.contains(token.substring(token.lastIndexOf('.') + 1))).as(log + " holds a token")
                        .isFalse();
            }
        }
    }

    // --- the pieces -----------------------------------------------------------------------------

    /**
     * A restricted pod (user 1000, fsGroup 2000) with the agent's volume at /agent and, if asked, kubelet's projected
     * token at /kubelet. Its container reads /agent/token in a loop and keeps in /work/counts the reads, the reads
     * that were not a whole token (three parts, the signature as long as the first read's) and the versions seen.
     */
    private static V1Pod pod(String name, Map<String, String> attributes, boolean withKubeletToken) {
        String reader = "n=0; torn=0; v=0; last=; len=; mkdir -p /work; "
                + "while :; do t=$(cat /agent/token 2>/dev/null); n=$((n+1)); s=${t##*.}; "
                + "[ -z \"$len\" ] && [ -n \"$t\" ] && len=${#s}; "
                + "case \"$t\" in ey*.*.*) [ ${#s} -eq \"$len\" ] || torn=$((torn+1));; *) torn=$((torn+1));; esac; "
                + "[ \"$t\" != \"$last\" ] && { v=$((v+1)); last=$t; }; "
                + "[ $((n % 50)) -eq 0 ] && echo \"$n $torn $v\" > /work/counts; done";
        V1Container container = new V1Container().name("app").image("satoken.test/busybox:1")
                .command(List.of("sh", "-c", reader))
                .securityContext(new V1SecurityContext().allowPrivilegeEscalation(false)
                        .capabilities(new V1Capabilities().drop(List.of("ALL"))))
                .addVolumeMountsItem(new V1VolumeMount().name("agent").mountPath("/agent").readOnly(true))
                .addVolumeMountsItem(new V1VolumeMount().name("work").mountPath("/work"));
        V1PodSpec spec = new V1PodSpec().nodeName(node.nodeName()).serviceAccountName(SA)
                .automountServiceAccountToken(false).terminationGracePeriodSeconds(0L)
                .securityContext(new V1PodSecurityContext().runAsNonRoot(true).runAsUser(USER).fsGroup(FS_GROUP)
                        .seccompProfile(new V1SeccompProfile().type("RuntimeDefault")))
                .addVolumesItem(new V1Volume().name("agent").csi(new V1CSIVolumeSource().driver(DRIVER).readOnly(true)
                        .volumeAttributes(attributes)))
                .addVolumesItem(new V1Volume().name("work").emptyDir(new V1EmptyDirVolumeSource()));
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

    /** The file's content as the container reads it; recorded so the secrets checks look for it in every log. */
    private static String read(RunningPod pod, String file) throws IOException {
        return IssuedTokens.record(exec(pod, "cat", file).strip());
    }

    private static String exec(RunningPod pod, String... command) throws IOException {
        ExecResult result = node.exec(pod.namespace(), pod.name(), "app", command);
        if (!result.succeeded()) {
            throw new AssertionError(String.join(" ", command) + " in " + pod.name() + " failed (exit "
                    + result.exitCode() + "): " + result.stderr());
        }
        return result.stdout();
    }

    /** Every log of this class's agents in this run, the restarted ones' too. */
    private static List<Path> agentLogFiles() throws IOException {
        // named <run>-<seq>-<name>.log, <run> this JVM's pid: a directory kept from an earlier run holds others
        String run = ProcessHandle.current().pid() + "-";
        try (Stream<Path> files = Files.walk(E2E.logsDir())) {
            return files.filter(Files::isRegularFile).map(f -> f.getFileName().toString())
                    .filter(name -> name.startsWith(run) && name.contains("-" + AGENT)).map(E2E.logsDir()::resolve)
                    .sorted().toList();
        }
    }

    private static String agentLogs() throws IOException {
        List<String> texts = new ArrayList<>();
        for (Path log : agentLogFiles()) {
            texts.add(Files.readString(log, StandardCharsets.ISO_8859_1));
        }
        return String.join("\n", texts);
    }

    /** The message of the pod's first Event with that reason, or null. */
    private static String warning(String pod, String reason) {
        try {
            List<CoreV1Event> events = new CoreV1Api(node.adminClient()).listNamespacedEvent(namespace)
                    .fieldSelector("involvedObject.name=" + pod).execute().getItems();
            return events.stream().filter(e -> reason.equals(e.getReason())).map(CoreV1Event::getMessage)
                    .filter(Objects::nonNull).findFirst().orElse(null);
        } catch (ApiException e) {
            return null;
        }
    }
}
