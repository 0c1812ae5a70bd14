package io.satoken.agent.csi;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assumptions.assumeThat;

import io.grpc.Status;
import io.kubernetes.client.openapi.models.V1CSIVolumeSource;
import io.kubernetes.client.openapi.models.V1Container;
import io.kubernetes.client.openapi.models.V1ObjectMeta;
import io.kubernetes.client.openapi.models.V1Pod;
import io.kubernetes.client.openapi.models.V1PodSecurityContext;
import io.kubernetes.client.openapi.models.V1PodSpec;
import io.kubernetes.client.openapi.models.V1SecurityContext;
import io.kubernetes.client.openapi.models.V1Volume;
import io.satoken.agent.pods.PodEvents;
import io.satoken.agent.projection.PodIdentity;
import io.satoken.agent.projection.PodOwners;
import io.satoken.agent.projection.Projection;
import io.satoken.agent.projection.TokenDirectory;
import io.satoken.agent.refresh.RefreshListener;
import io.satoken.agent.reload.ContainerSignaller;
import io.satoken.agent.reload.ReloadNotifier;
import io.kubernetes.client.openapi.models.V1ContainerState;
import io.kubernetes.client.openapi.models.V1ContainerStateRunning;
import io.kubernetes.client.openapi.models.V1ContainerStateWaiting;
import io.kubernetes.client.openapi.models.V1ContainerStatus;
import io.kubernetes.client.openapi.models.V1PodStatus;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.io.UncheckedIOException;
import io.satoken.agent.testing.FakeClock;
import io.satoken.agent.testing.FakeMounter;
import io.satoken.agent.testing.MapPodReader;
import io.satoken.agent.testing.PodInfo;
import io.satoken.agent.testing.RefreshHarness;
import io.satoken.agent.testing.ScriptedTokenSource;
import io.satoken.agent.token.BoundObjectRef;
import io.satoken.agent.token.IssuedToken;
import io.satoken.agent.token.IssuerKeys;
import io.satoken.agent.token.LocalIssuer;
import io.satoken.agent.token.SignatureCheck;
import io.satoken.agent.refresh.TokenAdoption;
import io.satoken.agent.token.TokenKey;
import io.satoken.agent.token.TokenSourceException;
import io.satoken.agent.write.AtomicWriter;
import io.satoken.agent.write.DirectoryWriter;
import io.satoken.agent.write.FileOwnerException;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeoutException;
import java.util.function.Function;
import java.util.function.UnaryOperator;
import java.util.stream.Collectors;
import java.util.stream.IntStream;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Publishing and unpublishing CSI volumes on a fake clock, a fake mounter (the "tmpfs" is a real temporary
 * directory) and a map of pods: what is mounted, requested, written and remembered, and every refusal.
 */
class CsiVolumesTest {
    private static final Instant START = RefreshHarness.START;
    private static final String UID = "0b7e6f0a-1111-2222-3333-444455556666";
    private static final String VOLUME = "csi-4f1c0e9d7a3b";
    private static final String NODE = "node-a";
    /** The token volumes of the pod's spec that the tests publish. */
    private static final List<String> SPEC_VOLUMES = List.of("tokens", "more", "elsewhere");
    private static final PodIdentity WEB = new PodIdentity("shop", "web-0", UID, "app");
    private static final BoundObjectRef BOUND = BoundObjectRef.pod("web-0", UID);
    private static final String TWO_FILES = """
            - {path: vault/token, audience: vault}
            - {path: sts/token, audience: sts, expirationSeconds: 7200}
            """;

    @TempDir
    Path kubeletDir;

    private final FakeClock clock = new FakeClock(START);
    private final ScriptedTokenSource source = new ScriptedTokenSource(clock, Duration.ofHours(1));
    private final FakeMounter mounter = new FakeMounter();
    private final MapPodReader pods = new MapPodReader();
    private final List<String> events = new ArrayList<>();
    /** Each directory's writer; null for the scheduler's own AtomicWriter. */
    private Function<Path, DirectoryWriter> writers;
    private Agent agent;
    /** The reload signals sent: pod uid, container id, signal, and the token file's content at that moment. */
    private final List<String> signals = new ArrayList<>();

    /**
     * The parts AgentRuntime puts around CsiVolumes, on this test's clock, mounter and pods. A second one
     * over the same directories and mounter is the agent after a restart.
     */
    private final class Agent implements AutoCloseable {
        final RefreshHarness refresh;
        final VolumeStore store = new VolumeStore(storeDir());
        CsiVolumes volumes;
        TokenAdoption adoption;
        /** The publish being watched, and whether it had completed at each file written. */
        CompletableFuture<Void> watched;
        final List<Boolean> doneAtEachWrite = new ArrayList<>();
        final ReloadNotifier reloads = new ReloadNotifier(pods::read, (podUid, containerId, signal) -> {
            try {
                signals.add(podUid + " " + containerId + " " + signal + " " + Files.readString(target().resolve("token")));
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
            return ContainerSignaller.Outcome.delivered(4242);
        }, clock, clock, new SimpleMeterRegistry());

        Agent(ScriptedTokenSource tokens) throws IOException {
            this(tokens, SignatureCheck.unavailable("a test without keys"));
        }

        Agent(ScriptedTokenSource tokens, SignatureCheck keys) throws IOException {
            RefreshHarness.Builder builder = RefreshHarness.builder().clock(clock).source(tokens);
            if (writers != null) {
                builder.writer(writers);
            }
            refresh = builder.listener(RefreshListener.all(new RefreshListener() {
                @Override
                public void written(TokenDirectory dir, Projection projection, IssuedToken token, boolean rotation) {
                    if (watched != null) {
                        doneAtEachWrite.add(watched.isDone());
                    }
                }
            }, reloads, new PodEvents((pod, reason, message) -> events.add(pod.getMetadata().getNamespace() + "/"
                    + pod.getMetadata().getName() + " " + reason + ": " + message), reloads))).build();
            store.create();
            adoption = new TokenAdoption(refresh.cache(), Optional.empty(), keys);
            volumes = new CsiVolumes(podsDir(), NODE, store, mounter, pods, refresh.scheduler(), reloads);
        }

        CompletableFuture<Void> publish(Path target, Map<String, String> attributes) throws CsiException {
            return volumes.publish(VOLUME, target.toString(), attributes);
        }

        @Override
        public void close() {
            refresh.close();
        }
    }

    @BeforeEach
    void start() throws IOException {
        pods.put(pod(UID, s -> s));
        agent = new Agent(source);
    }

    @AfterEach
    void stop() {
        agent.close();
    }

    private Path podsDir() {
        return kubeletDir.resolve("pods");
    }

    private Path storeDir() {
        return kubeletDir.resolve("plugins/tokens.satoken.io/volumes");
    }

    /** Where the kubelet asks for a pod's inline CSI volume. */
    private Path target(String podUid, String volume) {
        return podsDir().resolve(podUid).resolve("volumes/kubernetes.io~csi").resolve(volume).resolve("mount");
    }

    private Path target() {
        return target(UID, "tokens");
    }

    /** The pod as the API server has it: on this node, as the kubelet's ServiceAccount, with the token volumes. */
    private static V1Pod pod(String uid, UnaryOperator<V1PodSpec> spec) {
        V1PodSpec base = new V1PodSpec().nodeName(NODE).serviceAccountName("app")
                .addContainersItem(new V1Container().name("app"));
        SPEC_VOLUMES.forEach(name -> base.addVolumesItem(tokenVolume(name, Map.of())));
        return new V1Pod().metadata(new V1ObjectMeta().namespace("shop").name("web-0").uid(uid))
                .spec(spec.apply(base));
    }

    private static V1Volume tokenVolume(String name, Map<String, String> attributes) {
        return new V1Volume().name(name).csi(new V1CSIVolumeSource().driver("tokens.satoken.io").readOnly(true)
                .volumeAttributes(attributes));
    }

    /** The kubelet's pod info for {@link #WEB}, then the pod's own attributes. */
    private static Map<String, String> attributes(String... keyValues) {
        return PodInfo.attributes(WEB, keyValues);
    }

    private static Status.Code codeOf(Throwable e) {
        return ((CsiException) e).code();
    }

    private static CsiException failureOf(CompletableFuture<Void> future) {
        assertThat(future).isCompletedExceptionally();
        try {
            future.get();
            throw new AssertionError("not failed");
        } catch (ExecutionException e) {
            assertThat(e.getCause()).isInstanceOf(CsiException.class);
            return (CsiException) e.getCause();
        } catch (InterruptedException e) {
            throw new AssertionError(e);
        }
    }

    // --- publish

    @Test
    void publish_writesEveryFileBoundToTheKubeletsPod_andCompletesWhenAllAreWritten() throws Exception {
        CompletableFuture<Void> published = agent.publish(target(), attributes("projections", TWO_FILES));
        agent.watched = published;

        assertThat(published).isNotDone();
        assertThat(mounter.mounted()).containsExactly(target());
        clock.runDue();

        assertThat(published).isCompletedWithValue(null);
        // both files are one payload: the publish completes once that write is over, not at either file's report
        assertThat(agent.doneAtEachWrite).as("done at the first file? at the second?").containsExactly(false, false);
        assertThat(Files.readString(target().resolve("vault/token"))).startsWith("token-");
        assertThat(Files.readString(target().resolve("sts/token"))).startsWith("token-");
        // PV-14: the ServiceAccount and binding of the kubelet's pod info, not of the pod object read from the API
        assertThat(source.callKeys()).containsExactlyInAnyOrder(
                new TokenKey("shop", "app", List.of("vault"), 3600, BOUND),
                new TokenKey("shop", "app", List.of("sts"), 7200, BOUND));
        assertThat(pods.reads()).containsExactly("shop/web-0");
    }

    @Test
    void publish_recordsTheVolumeBeforeAnyToken() throws Exception {
        agent.publish(target(), attributes("audience", "vault", "path", "a/token"));

        assertThat(source.calls()).isZero();
        assertThat(agent.store.loadAll()).singleElement().satisfies(v -> assertThat(v.files()).containsExactly(
                new Projection(new TokenKey("shop", "app", List.of("vault"), 3600, BOUND), "a/token", 0644, null, null)));
    }

    @Test
    void publish_sameTargetAgain_isIdempotent() throws Exception {
        CompletableFuture<Void> first = agent.publish(target(), attributes("audience", "vault"));
        CompletableFuture<Void> retriedWhileWaiting = agent.publish(target(), attributes("audience", "vault"));
        assertThat(retriedWhileWaiting).isNotDone();
        clock.runDue();
        CompletableFuture<Void> retriedAfter = agent.publish(target(), attributes("audience", "vault"));
        clock.runDue();

        assertThat(List.of(first, retriedWhileWaiting, retriedAfter)).allSatisfy(f -> assertThat(f).isCompletedWithValue(null));
        assertThat(source.calls()).as("one TokenRequest per key").isEqualTo(1);
        assertThat(mounter.mountCalls()).hasSize(1);
        assertThat(pods.reads()).hasSize(1);
        assertThat(agent.volumes.size()).isEqualTo(1);
    }

    @Test
    void publish_callerGivingUp_doesNotFailTheVolume() throws Exception {
        // Regression: the CSI server puts a timeout on the future it gets; that timeout must not fail the
        // volume itself, or every retry of the kubelet would be answered with it and the pod never start.
        CompletableFuture<Void> first = agent.publish(target(), attributes());
        first.completeExceptionally(new TimeoutException("the kubelet's deadline"));

        CompletableFuture<Void> retry = agent.publish(target(), attributes());
        assertThat(retry).isNotDone();
        clock.runDue();

        assertThat(retry).isCompletedWithValue(null);
        assertThat(target().resolve("token")).hasContent("token-1");
    }

    @Test
    void publish_twoVolumesOfOnePod_shareOneTokenRequest() throws Exception {
        CompletableFuture<Void> first = agent.publish(target(), attributes("audience", "vault"));
        clock.runDue();
        CompletableFuture<Void> second = agent.volumes.publish("csi-second", target(UID, "more").toString(),
                attributes("audience", "vault", "path", "other"));
        clock.runDue();

        assertThat(first).isCompletedWithValue(null);
        assertThat(second).isCompletedWithValue(null);
        assertThat(source.calls()).isEqualTo(1);
        assertThat(target(UID, "more").resolve("other")).hasContent("token-1");
    }

    @Test
    void publish_sameIdAtAnotherTarget_isAlreadyExists() throws Exception {
        agent.publish(target(), attributes());
        Path other = target(UID, "elsewhere");

        assertThatThrownBy(() -> agent.publish(other, attributes()))
                .isInstanceOfSatisfying(CsiException.class, e -> assertThat(e.code()).isEqualTo(Status.Code.ALREADY_EXISTS))
                .hasMessage("volume " + VOLUME + " is already published at " + target() + ", not at " + other);
        assertThat(mounter.mountCalls()).containsExactly(target());
    }

    /** {@code $K} in target and message stands for the kubelet's directory, {@code $T} for the good target. */
    record BadTarget(String name, String volumeId, String target, String message) {
        @Override
        public String toString() {
            return name;
        }
    }

    static Stream<BadTarget> badTargets() {
        String rule = "target_path: must be a normalized absolute path under $K/pods, got ";
        String idRule = "volume_id: must be 1-128 letters, digits, '.', '_' or '-', starting with a letter or digit";
        return Stream.of(
                new BadTarget("outside the pods dir", VOLUME, "$K/plugins/x", rule + "$K/plugins/x"),
                new BadTarget("elsewhere on the node", VOLUME, "/etc", rule + "/etc"),
                new BadTarget("the pods dir itself", VOLUME, "$K/pods", rule + "$K/pods"),
                new BadTarget("a sibling named like it", VOLUME, "$K/pods2/" + UID, rule + "$K/pods2/" + UID),
                new BadTarget("climbing out with ..", VOLUME, "$K/pods/" + UID + "/../../plugins/x",
                        rule + "$K/pods/" + UID + "/../../plugins/x"),
                new BadTarget("not normalized", VOLUME, "$K/pods/" + UID + "/./mount", rule + "$K/pods/" + UID + "/./mount"),
                new BadTarget("relative", VOLUME, "pods/" + UID + "/mount", rule + "pods/" + UID + "/mount"),
                new BadTarget("empty", VOLUME, "", "target_path: Required value"),
                new BadTarget("no volume id", "", "$T", "volume_id: Required value"),
                new BadTarget("volume id a path", "../../etc/x", "$T", idRule),
                new BadTarget("volume id hidden", ".x", "$T", idRule),
                new BadTarget("volume id too long", "v".repeat(129), "$T", idRule));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("badTargets")
    void publish_badTargetOrId_isInvalidArgument_andNothingIsMounted(BadTarget c) throws IOException {
        String target = c.target().replace("$K", kubeletDir.toString()).replace("$T", target().toString());
        String message = c.message().replace("$K", kubeletDir.toString());

        assertThatThrownBy(() -> agent.volumes.publish(c.volumeId(), target, attributes()))
                .isInstanceOfSatisfying(CsiException.class, e -> assertThat(e.code()).isEqualTo(Status.Code.INVALID_ARGUMENT))
                .hasMessage(message);
        assertThat(mounter.mountCalls()).isEmpty();
        assertThat(pods.reads()).isEmpty();
        assertThat(agent.store.loadAll()).isEmpty();
        assertThat(agent.volumes.size()).isZero();
    }

    @Test
    void publish_invalidAttributes_isInvalidArgumentNamingTheAttribute_andNothingIsMounted() throws IOException {
        assertThatThrownBy(() -> agent.publish(target(), attributes("path", "/etc/passwd")))
                .isInstanceOfSatisfying(CsiException.class, e -> assertThat(e.code()).isEqualTo(Status.Code.INVALID_ARGUMENT))
                .hasMessage("volumeAttributes.path: must be a relative path, got \"/etc/passwd\"");
        assertThat(mounter.mountCalls()).isEmpty();
        assertThat(pods.reads()).isEmpty();
        assertThat(agent.volumes.size()).isZero();
    }

    @Test
    void publish_podMissing_isNotFound_andARetryWorksOnceItExists() throws Exception {
        pods.remove("shop", "web-0");

        assertThatThrownBy(() -> agent.publish(target(), attributes()))
                .isInstanceOfSatisfying(CsiException.class, e -> assertThat(e.code()).isEqualTo(Status.Code.NOT_FOUND))
                .hasMessage("pod shop/web-0 (uid \"" + UID + "\") does not exist");
        assertThat(mounter.mountCalls()).isEmpty();
        assertThat(agent.store.loadAll()).isEmpty();
        assertThat(agent.volumes.size()).isZero();

        pods.put(pod(UID, s -> s));
        CompletableFuture<Void> retry = agent.publish(target(), attributes());
        clock.runDue();
        assertThat(retry).isCompletedWithValue(null);
    }

    @Test
    void publish_podReplacedUnderTheSameName_isFailedPrecondition() throws IOException {
        pods.put(pod("a-newer-uid", s -> s));

        assertThatThrownBy(() -> agent.publish(target(), attributes()))
                .isInstanceOfSatisfying(CsiException.class,
                        e -> assertThat(e.code()).isEqualTo(Status.Code.FAILED_PRECONDITION))
                .hasMessage("pod shop/web-0 now has uid a-newer-uid, not the kubelet's " + UID + "; it was replaced");
        assertThat(mounter.mountCalls()).isEmpty();
        assertThat(source.calls()).isZero();
        assertThat(agent.store.loadAll()).isEmpty();
    }

    @Test
    void publish_apiServerUnreachable_isUnavailable() {
        pods.failWith(new IOException("connect timed out"));

        assertThatThrownBy(() -> agent.publish(target(), attributes()))
                .isInstanceOfSatisfying(CsiException.class, e -> assertThat(e.code()).isEqualTo(Status.Code.UNAVAILABLE))
                .hasMessage("reading pod shop/web-0 (uid \"" + UID + "\") failed: connect timed out");
        assertThat(mounter.mountCalls()).isEmpty();
    }

    @Test
    void publish_mountFailing_isInternal_andForgotten() throws Exception {
        mounter.failNextMount(new IOException("mount: permission denied"));

        assertThatThrownBy(() -> agent.publish(target(), attributes()))
                .isInstanceOfSatisfying(CsiException.class, e -> assertThat(e.code()).isEqualTo(Status.Code.INTERNAL))
                .hasMessage("publishing volume " + VOLUME + " failed: mount: permission denied"); // no class name
        assertThat(agent.store.loadAll()).isEmpty();
        assertThat(agent.volumes.size()).isZero();

        CompletableFuture<Void> retry = agent.publish(target(), attributes());
        clock.runDue();
        assertThat(retry).isCompletedWithValue(null);
    }

    record FirstFailure(String name, TokenSourceException error, Status.Code code) {
        @Override
        public String toString() {
            return name;
        }
    }

    static Stream<FirstFailure> firstFailures() {
        return Stream.of(
                new FirstFailure("refused (403/404/422)", TokenSourceException.permanent(
                        "HTTP 404: serviceaccounts \"app\" not found", null), Status.Code.FAILED_PRECONDITION),
                new FirstFailure("transient", new TokenSourceException("HTTP 503: etcdserver: leader changed"),
                        Status.Code.UNAVAILABLE));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("firstFailures")
    void publish_firstTokenRequestFailing_failsWithTheReason_undoesEverything_andARetryWorks(FirstFailure c)
            throws Exception {
        source.failNext(c.error());

        CompletableFuture<Void> published = agent.publish(target(), attributes("audience", "vault"));
        clock.runDue();

        CsiException failure = failureOf(published);
        assertThat(failure.code()).isEqualTo(c.code());
        // the API server's reason reaches the kubelet, and so the pod's FailedMount Event
        assertThat(failure.getMessage()).startsWith("first token of the volume: ").contains("shop/app")
                .endsWith(": " + c.error().getMessage());
        assertThat(mounter.mounted()).isEmpty();
        assertThat(mounter.unmountCalls()).containsExactly(target());
        assertThat(agent.store.loadAll()).isEmpty();
        assertThat(agent.volumes.size()).isZero();
        assertThat(clock.pendingTimers()).as("no retry of a volume given up").isZero();
        assertThat(events).as("the failure is the publish's, not a Warning Event").isEmpty();

        CompletableFuture<Void> retry = agent.publish(target(), attributes("audience", "vault"));
        clock.runDue();
        assertThat(retry).isCompletedWithValue(null);
        assertThat(target().resolve("token")).hasContent("token-2");
        assertThat(agent.store.loadAll()).hasSize(1);
    }

    /** A file's mode and owner, and the mode and group of the volume's dirs (finding 5: they were 0755). */
    record Ownership(String name, UnaryOperator<V1PodSpec> spec, String mode, Integer uid, Integer gid, String dirMode,
            int dirGid) {
        @Override
        public String toString() {
            return name;
        }
    }

    static Stream<Ownership> ownership() {
        return Stream.of(
                // PV-1
                // (the file is anyone's: the group and others pass through the dirs, never list them)
                new Ownership("no securityContext", s -> s, "rw-r--r--", null, null, "rwx--x--x", 0),
                // PV-17: the dirs are fsGroup's, as kubelet's are
                new Ownership("fsGroup", s -> s.securityContext(new V1PodSecurityContext().fsGroup(2000L)),
                        "rw-r-----", null, 2000, "rwxr-x---", 2000),
                // PV-16, PV-18 (user 1000 is in group 0 or another: both classes pass it)
                new Ownership("every container runs as 1000", s -> s.securityContext(
                        new V1PodSecurityContext().runAsUser(1000L)), "rw-------", 1000, null, "rwx--x--x", 0),
                new Ownership("runAsUser and fsGroup", s -> s.securityContext(
                        new V1PodSecurityContext().runAsUser(1000L).fsGroup(2000L)), "rw-r-----", 1000, 2000,
                        "rwxr-x--x", 2000),
                new Ownership("containers disagree", s -> s.addContainersItem(new V1Container().name("sidecar")
                        .securityContext(new V1SecurityContext().runAsUser(7L))), "rw-r--r--", null, null, "rwx--x--x", 0));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("ownership")
    void publish_fileModeAndOwner_followThePodsSecurityContext(Ownership c) throws Exception {
        assumeThat(System.getProperty("user.name")).as("chown needs root").isEqualTo("root");
        pods.put(pod(UID, c.spec()));

        CompletableFuture<Void> published = agent.publish(target(), attributes());
        clock.runDue();

        assertThat(published).isCompletedWithValue(null);
        Path token = target().resolve("token");
        assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(token))).isEqualTo(c.mode());
        assertThat(Files.getAttribute(token, "unix:uid")).isEqualTo(c.uid() == null ? 0 : c.uid());
        assertThat(Files.getAttribute(token, "unix:gid")).isEqualTo(c.gid() == null ? 0 : c.gid());
        Path data = target().resolve(Files.readSymbolicLink(target().resolve("..data")));
        for (Path dir : List.of(target(), data)) {
            assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(dir))).as("%s", dir)
                    .isEqualTo(c.dirMode());
            assertThat(Files.getAttribute(dir, "unix:gid")).as("%s", dir).isEqualTo(c.dirGid());
        }
    }

    // --- the kubelet's word, checked against the API server's pod

    @Test
    void publish_targetUnderAnotherPodsDirectory_isInvalidArgument_andNothingIsReadOrMounted() {
        Path theirs = target("9d2e0c1b-aaaa-bbbb-cccc-ddddeeeeffff", "tokens");

        assertThatThrownBy(() -> agent.publish(theirs, attributes()))
                .isInstanceOfSatisfying(CsiException.class, e -> assertThat(e.code()).isEqualTo(Status.Code.INVALID_ARGUMENT))
                .hasMessage("target_path: must be " + podsDir().resolve(UID) + "/volumes/kubernetes.io~csi/<volume>/mount,"
                        + " the kubelet's path for an inline volume of the pod csi.storage.k8s.io/pod.uid names, got "
                        + theirs);
        assertThat(pods.reads()).isEmpty();
        assertThat(mounter.mountCalls()).isEmpty();
    }

    @Test
    void publish_targetThatIsNoVolumesMountPath_isInvalidArgument() {
        Path notAVolume = podsDir().resolve(UID).resolve("etc-hosts");

        assertThatThrownBy(() -> agent.publish(notAVolume, attributes()))
                .isInstanceOfSatisfying(CsiException.class, e -> assertThat(e.code()).isEqualTo(Status.Code.INVALID_ARGUMENT))
                .hasMessageStartingWith("target_path: must be ");
        assertThat(mounter.mountCalls()).isEmpty();
    }

    /** A caller naming a pod of another node must not get that pod's tokens here (the webhook's NT-4, on the node). */
    @Test
    void publish_podBoundToAnotherNode_isFailedPrecondition_andNothingIsRequested() {
        pods.put(pod(UID, s -> s.nodeName("node-b")));

        assertThatThrownBy(() -> agent.publish(target(), attributes()))
                .isInstanceOfSatisfying(CsiException.class,
                        e -> assertThat(e.code()).isEqualTo(Status.Code.FAILED_PRECONDITION))
                .hasMessage("pod shop/web-0 is bound to node node-b (spec.nodeName), not to this agent's node node-a");
        assertThat(mounter.mountCalls()).isEmpty();
        assertThat(source.calls()).isZero();
    }

    @Test
    void publish_podRunningAsAnotherServiceAccount_isFailedPrecondition() {
        pods.put(pod(UID, s -> s.serviceAccountName("admin")));

        assertThatThrownBy(() -> agent.publish(target(), attributes()))
                .isInstanceOfSatisfying(CsiException.class,
                        e -> assertThat(e.code()).isEqualTo(Status.Code.FAILED_PRECONDITION))
                .hasMessage("pod shop/web-0 runs as ServiceAccount admin (spec.serviceAccountName), not as the "
                        + "kubelet's app (csi.storage.k8s.io/serviceAccount.name)");
        assertThat(source.calls()).isZero();
    }

    @Test
    void publish_podWithoutServiceAccountName_runsAsDefault() {
        pods.put(pod(UID, s -> s.serviceAccountName(null)));

        assertThatThrownBy(() -> agent.publish(target(), attributes()))
                .hasMessageContaining("runs as ServiceAccount default (spec.serviceAccountName)");
    }

    @Test
    void publish_volumeTheSpecDoesNotHave_isFailedPrecondition() {
        Path absent = target(UID, "absent");

        assertThatThrownBy(() -> agent.publish(absent, attributes()))
                .isInstanceOfSatisfying(CsiException.class,
                        e -> assertThat(e.code()).isEqualTo(Status.Code.FAILED_PRECONDITION))
                .hasMessage("pod shop/web-0 has no tokens.satoken.io volume named absent (spec.volumes), the volume "
                        + "target_path is for");
        assertThat(mounter.mountCalls()).isEmpty();
    }

    @Test
    void publish_volumeOfAnotherDriverUnderTheName_isFailedPrecondition() {
        pods.put(pod(UID, s -> s.volumes(List.of(new V1Volume().name("tokens")
                .csi(new V1CSIVolumeSource().driver("secrets-store.csi.k8s.io"))))));

        assertThatThrownBy(() -> agent.publish(target(), attributes()))
                .hasMessageContaining("has no tokens.satoken.io volume named tokens (spec.volumes)");
    }

    // --- what one pod may ask of its node

    @Test
    void publish_podWithMoreThanEightTokenVolumes_isResourceExhausted_forEveryVolume() throws IOException {
        pods.put(pod(UID, s -> {
            for (int i = 0; i < 6; i++) {
                s.addVolumesItem(tokenVolume("extra-" + i, Map.of()));
            }
            return s;
        }));

        assertThatThrownBy(() -> agent.publish(target(), attributes()))
                .isInstanceOfSatisfying(CsiException.class,
                        e -> assertThat(e.code()).isEqualTo(Status.Code.RESOURCE_EXHAUSTED))
                .hasMessage("spec.volumes: pod shop/web-0 has 9 tokens.satoken.io volumes; a pod may have at most 8 "
                        + "(give one volume several files with volumeAttributes.projections)");
        assertThat(mounter.mountCalls()).isEmpty();
        assertThat(agent.store.loadAll()).isEmpty();
        assertThat(agent.volumes.size()).isZero();
    }

    record RefusedId(String name, UnaryOperator<V1PodSpec> spec, String attribute, String projections, boolean group,
            int id, String message) {
        @Override
        public String toString() {
            return name;
        }
    }

    static Stream<RefusedId> refusedIds() {
        return Stream.of(
                new RefusedId("fsGroup", s -> s.securityContext(new V1PodSecurityContext().fsGroup(70000L)), null, null,
                        true, 70000, "spec.securityContext.fsGroup: cannot give the token files group 70000"),
                new RefusedId("the pod's runAsUser", s -> s.securityContext(new V1PodSecurityContext().runAsUser(70000L)),
                        null, null, false, 70000, "spec.securityContext.runAsUser: cannot give the token files owner 70000"),
                new RefusedId("a container's runAsUser", s -> s.containers(List.of(new V1Container().name("app")
                        .securityContext(new V1SecurityContext().runAsUser(70001L)))), null, null, false, 70001,
                        "spec.containers[0].securityContext.runAsUser: cannot give the token files owner 70001"),
                new RefusedId("a projections entry's gid", s -> s, "projections", "- {path: a}\n- {path: b, gid: 70002}\n",
                        true, 70002, "volumeAttributes.projections[1].gid: cannot give the token files group 70002"));
    }

    /**
     * An id the node refuses (a chown failing with EINVAL: outside the agent's user namespace, say) fails the
     * publish with FAILED_PRECONDITION naming the pod's field and the id, for the kubelet's FailedMount Event;
     * the volume is undone and every other pod's volume is served.
     */
    @ParameterizedTest(name = "{0}")
    @MethodSource("refusedIds")
    void publish_anIdTheNodeRefuses_failsNamingTheFieldAndTheId_andOtherPodsAreServed(RefusedId c) throws Exception {
        agent.close();
        String otherUid = "9a9a9a9a-1111-2222-3333-444455556666";
        Path refusing = target();
        // the node's chown: EINVAL for the refused id, as the kernel answers for an id outside the user namespace
        writers = dir -> dir.startsWith(refusing) ? payload -> {
            throw new FileOwnerException(dir.resolve("..2026_01_01_00_00_00.1/token"), c.group(), c.id(),
                    "Invalid argument");
        } : new AtomicWriter(dir, clock);
        agent = new Agent(source);
        pods.put(pod(UID, c.spec()));
        V1Pod web1 = pod(otherUid, s -> s);
        web1.getMetadata().setName("web-1");
        pods.put(web1);

        CompletableFuture<Void> refused = agent.publish(refusing, c.attribute() == null ? attributes()
                : attributes(c.attribute(), c.projections()));
        clock.runDue();

        CsiException failure = failureOf(refused);
        assertThat(failure.code()).isEqualTo(Status.Code.FAILED_PRECONDITION);
        assertThat(failure.getMessage()).isEqualTo("pod " + WEB + ": " + c.message()
                + " on this node (chown: Invalid argument); use an id the node's agent can chown to");
        assertThat(mounter.mounted()).as("undone").isEmpty();
        assertThat(agent.store.loadAll()).isEmpty();
        assertThat(agent.volumes.size()).isZero();
        clock.advance(Duration.ofMinutes(5));
        assertThat(clock.pendingTimers()).as("no retry of a volume given up").isZero();

        PodIdentity other = new PodIdentity("shop", "web-1", otherUid, "app");
        CompletableFuture<Void> served = agent.volumes.publish("csi-other", target(otherUid, "tokens").toString(),
                PodInfo.attributes(other));
        clock.runDue();
        assertThat(served).isCompletedWithValue(null);
        assertThat(target(otherUid, "tokens").resolve("token")).content().startsWith("token-");
    }

    /** An id no node holds (the API server's validation keeps them out) is refused before anything is mounted. */
    @Test
    void publish_idOutOfRange_isInvalidArgumentNamingTheContainersField_andNothingIsMounted() throws Exception {
        pods.put(pod(UID, s -> s.containers(List.of(new V1Container().name("app")
                .securityContext(new V1SecurityContext().runAsUser(1L << 32))))));

        assertThatThrownBy(() -> agent.publish(target(), attributes()))
                .isInstanceOfSatisfying(CsiException.class, e -> assertThat(e.code()).isEqualTo(Status.Code.INVALID_ARGUMENT))
                .hasMessage("pod " + WEB + ": spec.containers[0].securityContext.runAsUser: must be between 0 and "
                        + "2147483647, got 4294967296");
        assertThat(mounter.mountCalls()).isEmpty();
        assertThat(agent.store.loadAll()).isEmpty();
        assertThat(agent.volumes.size()).isZero();
    }

    @Test
    void publish_podAskingForMoreThan64TokenFiles_isResourceExhausted() {
        String forty = IntStream.range(0, 40).mapToObj(i -> "- {path: f" + i + "}").collect(Collectors.joining("\n"));
        pods.put(pod(UID, s -> s.volumes(List.of(tokenVolume("tokens", Map.of("projections", forty)),
                tokenVolume("more", Map.of("projections", forty))))));

        assertThatThrownBy(() -> agent.publish(target(), attributes("projections", forty)))
                .isInstanceOfSatisfying(CsiException.class,
                        e -> assertThat(e.code()).isEqualTo(Status.Code.RESOURCE_EXHAUSTED))
                .hasMessage("spec.volumes: pod shop/web-0 asks for 80 token files in its tokens.satoken.io volumes; "
                        + "a pod may ask for at most 64");
        assertThat(source.calls()).isZero();
    }

    @Test
    void publish_podWithSixteenFilesInFlight_getsNoMoreUntilTheyAreWritten() throws Exception {
        String sixteen = IntStream.range(0, 16).mapToObj(i -> "- {path: f" + i + ", audience: a" + i + "}")
                .collect(Collectors.joining("\n"));
        CompletableFuture<Void> first = agent.publish(target(), attributes("projections", sixteen));

        assertThatThrownBy(() -> agent.volumes.publish("csi-second", target(UID, "more").toString(), attributes()))
                .isInstanceOfSatisfying(CsiException.class,
                        e -> assertThat(e.code()).isEqualTo(Status.Code.RESOURCE_EXHAUSTED))
                .hasMessage("pod shop/web-0 has 16 token file(s) waiting for their first token; a pod may have at "
                        + "most 16 TokenRequests in flight, and this volume asks for 1; the kubelet will retry");
        assertThat(mounter.mountCalls()).containsExactly(target());

        clock.runDue();
        assertThat(first).isCompletedWithValue(null);
        CompletableFuture<Void> retry = agent.volumes.publish("csi-second", target(UID, "more").toString(), attributes());
        clock.runDue();
        assertThat(retry).isCompletedWithValue(null);
    }

    @Test
    void publish_otherWriteFailures_areRetried_notFailed() throws Exception {
        agent.close();
        List<Integer> attempts = new ArrayList<>();
        writers = dir -> payload -> {
            attempts.add(attempts.size());
            if (attempts.size() == 1) {
                throw new IOException("No space left on device");
            }
            return new AtomicWriter(dir, clock).write(payload);
        };
        agent = new Agent(source);

        CompletableFuture<Void> published = agent.publish(target(), attributes());
        clock.runDue();
        assertThat(published).isNotDone();
        clock.advance(Duration.ofSeconds(1)); // the backoff's first delay

        assertThat(published).isCompletedWithValue(null);
        assertThat(attempts).hasSize(2);
    }

    // --- unpublish

    @Test
    void unpublish_stopsRefreshing_unmounts_andForgets() throws Exception {
        agent.publish(target(), attributes("audience", "vault"));
        clock.runDue();
        assertThat(source.calls()).isEqualTo(1);

        agent.volumes.unpublish(VOLUME, target().toString());

        assertThat(mounter.mounted()).isEmpty();
        assertThat(target()).doesNotExist();
        assertThat(agent.store.loadAll()).isEmpty();
        assertThat(agent.volumes.size()).isZero();
        clock.advance(Duration.ofHours(3)); // past the 48-minute refresh, and past expiry
        assertThat(source.calls()).isEqualTo(1);
        assertThat(clock.pendingTimers()).isZero();
    }

    @Test
    void unpublish_isIdempotent_twiceAndForAnUnknownVolume() throws Exception {
        agent.publish(target(), attributes());
        clock.runDue();

        agent.volumes.unpublish(VOLUME, target().toString());
        agent.volumes.unpublish(VOLUME, target().toString());
        agent.volumes.unpublish("csi-never-published", target(UID, "unknown").toString());

        assertThat(mounter.mounted()).isEmpty();
        assertThat(target()).doesNotExist();
    }

    @Test
    void unpublish_whilePublishing_abortsThePublish_andRequestsNothing() throws Exception {
        CompletableFuture<Void> published = agent.publish(target(), attributes());

        agent.volumes.unpublish(VOLUME, target().toString());
        clock.runDue();

        assertThat(codeOf(failureOf(published))).isEqualTo(Status.Code.ABORTED);
        assertThat(source.calls()).isZero();
        assertThat(mounter.mounted()).isEmpty();
    }

    @Test
    void unpublish_anotherVolumesTarget_isInvalidArgument_andUnmountsNothing() throws Exception {
        agent.publish(target(), attributes());
        clock.runDue();

        assertThatThrownBy(() -> agent.volumes.unpublish("csi-never-published", target().toString()))
                .isInstanceOfSatisfying(CsiException.class, e -> assertThat(e.code()).isEqualTo(Status.Code.INVALID_ARGUMENT))
                .hasMessage("target_path: volume csi-never-published is not published, and " + target()
                        + " is another volume's; nothing was unmounted");
        assertThat(mounter.unmountCalls()).isEmpty();
        assertThat(target().resolve("token")).hasContent("token-1");
    }

    @Test
    void unpublish_aVolumeAtATargetNotItsRecord_isInvalidArgument_andUnmountsNothing() throws Exception {
        agent.publish(target(), attributes());
        clock.runDue();
        Path other = target(UID, "more");

        assertThatThrownBy(() -> agent.volumes.unpublish(VOLUME, other.toString()))
                .isInstanceOfSatisfying(CsiException.class, e -> assertThat(e.code()).isEqualTo(Status.Code.INVALID_ARGUMENT))
                .hasMessage("target_path: volume " + VOLUME + " is published at " + target() + ", and " + other
                        + " is not its target; nothing was unmounted");
        assertThat(mounter.unmountCalls()).isEmpty();
        assertThat(agent.volumes.size()).isEqualTo(1);
    }

    @Test
    void unpublish_targetOutsideThePodsDir_isInvalidArgument_andUnmountsNothing() {
        assertThatThrownBy(() -> agent.volumes.unpublish(VOLUME, "/etc"))
                .isInstanceOfSatisfying(CsiException.class, e -> assertThat(e.code()).isEqualTo(Status.Code.INVALID_ARGUMENT));
        assertThat(mounter.unmountCalls()).isEmpty();
    }

    // --- refresh failures and restart

    @Test
    void refreshFailing_afterPublish_isATokenRequestFailedEventOnThePod() throws Exception {
        agent.publish(target(), attributes("audience", "vault"));
        clock.runDue();
        source.failAlways(new TokenSourceException("HTTP 503: the server is currently unable to handle the request"));

        clock.advance(Duration.ofMinutes(49));

        assertThat(events).first().asString().startsWith("shop/web-0 TokenRequestFailed: token for [token]: ")
                .endsWith(": HTTP 503: the server is currently unable to handle the request (the current token stays"
                        + " in place until it expires)");
        assertThat(target().resolve("token")).hasContent("token-1");
        assertThat(mounter.mounted()).containsExactly(target());
        assertThat(agent.store.loadAll()).hasSize(1);
    }

    @Test
    void resume_adoptsTheTokensOfMountedVolumes_withoutATokenRequest_andRefreshesThemLater() throws Exception {
        LocalIssuer issuer = LocalIssuer.generate("https://issuer.test", clock);
        agent.close();
        try (Agent before = new Agent(new ScriptedTokenSource(issuer))) {
            before.publish(target(), attributes("projections", TWO_FILES));
            clock.runDue();
        } // killed: the tmpfs and the record stay
        String vault = Files.readString(target().resolve("vault/token"));
        clock.advance(Duration.ofMinutes(20));

        ScriptedTokenSource afterRestart = new ScriptedTokenSource(issuer);
        agent = new Agent(afterRestart, IssuerKeys.parse(issuer.publicJwksJson()));
        assertThat(agent.volumes.resume(agent.adoption)).hasSize(1);
        clock.runDue();

        assertThat(afterRestart.calls()).as("TokenRequests for still-valid tokens").isZero();
        assertThat(target().resolve("vault/token")).hasContent(vault);
        assertThat(mounter.mountCalls()).hasSize(1);
        assertThat(agent.volumes.size()).isEqualTo(1);

        clock.advance(Duration.ofMinutes(29)); // past 48 minutes, the vault token's refresh
        assertThat(afterRestart.callKeys()).containsExactly(new TokenKey("shop", "app", List.of("vault"), 3600, BOUND));
        assertThat(Files.readString(target().resolve("vault/token"))).isNotEqualTo(vault);

        agent.volumes.unpublish(VOLUME, target().toString()); // a resumed volume is unpublished like any other
        assertThat(mounter.mounted()).isEmpty();
    }

    @Test
    void resume_aTokenNotAdopted_whoseRequestFails_isATokenRequestFailedEventAtTheFirstFailure() throws Exception {
        agent.publish(target(), attributes("audience", "vault"));
        clock.runDue();
        agent.close();

        ScriptedTokenSource afterRestart = new ScriptedTokenSource(clock, Duration.ofHours(1));
        afterRestart.failAlways(new TokenSourceException("HTTP 503: the server is currently unable to handle the"
                + " request"));
        agent = new Agent(afterRestart); // no keys: the token on disk is not adopted
        assertThat(agent.volumes.resume(agent.adoption)).hasSize(1);
        clock.runDue();

        // no publish waits for a resumed volume's first write: its pod hears of the failure at once
        assertThat(afterRestart.calls()).isEqualTo(1);
        assertThat(events).singleElement().asString().startsWith("shop/web-0 TokenRequestFailed: token for [token]: ")
                .endsWith(": HTTP 503: the server is currently unable to handle the request");
        assertThat(target().resolve("token")).hasContent("token-1");
    }

    @Test
    void resume_forgetsAVolumeWhoseTmpfsIsGone() throws Exception {
        agent.publish(target(), attributes());
        clock.runDue();
        agent.close();
        mounter.unmount(target()); // the node rebooted while the agent was down

        ScriptedTokenSource afterRestart = new ScriptedTokenSource(clock, Duration.ofHours(1));
        agent = new Agent(afterRestart);
        assertThat(agent.volumes.resume(agent.adoption)).isEmpty();
        clock.runDue();

        assertThat(agent.store.loadAll()).isEmpty();
        assertThat(agent.volumes.size()).isZero();
        assertThat(afterRestart.calls()).isZero();
    }

    @Test
    void resume_forgetsARecordOutsideThePodsDir_evenWhenSomethingIsMountedThere() throws Exception {
        Path elsewhere = Files.createDirectories(kubeletDir.resolve("elsewhere"));
        mounter.mountTmpfs(elsewhere);
        agent.store.save(PublishedVolume.of(VOLUME, elsewhere, attributes("expirationSeconds", "3600"),
                new PodOwners(null, null), null, Set.of()));

        assertThat(agent.volumes.resume(agent.adoption)).isEmpty();
        clock.runDue();

        assertThat(agent.store.loadAll()).isEmpty();
        assertThat(source.calls()).isZero();
        assertThat(elsewhere).isEmptyDirectory();
    }

    @Test
    void volumeRecords_neverHoldTheToken() throws Exception {
        agent.close();
        agent = new Agent(new ScriptedTokenSource(LocalIssuer.generate("https://issuer.test", clock)));
        agent.publish(target(), attributes("projections", TWO_FILES));
        clock.runDue();
        String vault = Files.readString(target().resolve("vault/token"));
        assertThat(vault).startsWith("eyJ");

        try (Stream<Path> records = Files.list(storeDir())) {
            assertThat(records.toList()).singleElement().satisfies(record -> {
                assertThat(Files.readString(record)).contains(UID, target().toString())
                        .doesNotContain(vault, "eyJ");
                assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(record))).isEqualTo("rw-------");
            });
        }
        assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(storeDir()))).isEqualTo("rwx------");
    }
    // --- reload signals -------------------------------------------------------------------------------------------

    static Stream<Object[]> badReloads() {
        return Stream.of(
                new Object[] {"unknown signal", new String[] {"reloadSignal", "SIGKILL"},
                        "volumeAttributes.reloadSignal: must be one of SIGHUP, SIGINT, SIGQUIT, SIGUSR1, SIGUSR2,"
                                + " SIGTERM, SIGWINCH, got \"SIGKILL\""},
                new Object[] {"container without signal", new String[] {"reloadContainer", "app"},
                        "volumeAttributes.reloadContainer: may be given only with volumeAttributes.reloadSignal"},
                new Object[] {"container the pod does not have", new String[] {"reloadSignal", "SIGHUP",
                        "reloadContainer", "sidecar"}, "volumeAttributes.reloadContainer: Invalid value: \"sidecar\":"
                                + " the pod has no such container (its containers: app)"});
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("badReloads")
    void publish_badReloadAttributes_isInvalidArgumentNamingTheAttribute(String name, String[] keyValues,
            String message) {
        assertThatThrownBy(() -> agent.publish(target(), attributes(keyValues)))
                .isInstanceOfSatisfying(CsiException.class, e -> {
                    assertThat(e.code()).isEqualTo(Status.Code.INVALID_ARGUMENT);
                    assertThat(e.getMessage()).contains(message);
                });
        assertThat(mounter.mounted()).isEmpty();
    }

    @Test
    void publish_reloadSignalWithoutAContainer_inAPodOfSeveral_isInvalidArgument() {
        pods.put(pod(UID, spec -> spec.addContainersItem(new V1Container().name("sidecar"))));
        assertThatThrownBy(() -> agent.publish(target(), attributes("reloadSignal", "HUP")))
                .isInstanceOfSatisfying(CsiException.class, e -> {
                    assertThat(e.code()).isEqualTo(Status.Code.INVALID_ARGUMENT);
                    assertThat(e.getMessage()).contains("volumeAttributes.reloadContainer: Required value: the pod"
                            + " has 2 containers (app, sidecar); name the one to send SIGHUP to");
                });
    }

    @Test
    void rotation_signalsTheContainerOfThePodsStatus_onceTheNewTokenIsInTheFile() throws Exception {
        pods.put(running(pod(UID, s -> s), "containerd://c0ffee"));
        publishNow(attributes("reloadSignal", "SIGHUP"));
        String first = Files.readString(target().resolve("token"));
        clock.runDue();
        assertThat(signals).as("no signal for the first write").isEmpty();

        clock.advance(Duration.ofMinutes(49)); // past the refresh at 80 % (less jitter) of the hour
        String second = Files.readString(target().resolve("token"));
        assertThat(second).isNotEqualTo(first);
        assertThat(signals).containsExactly(UID + " c0ffee SIGHUP " + second);
        assertThat(agent.reloads.last("csi:" + VOLUME)).hasValueSatisfying(last -> {
            assertThat(last.delivered()).isTrue();
            assertThat(last.container()).isEqualTo("app");
            assertThat(last.pid()).isEqualTo(4242);
        });
    }

    @Test
    void rotation_withTheContainerNotRunning_isReported_andNotRetried() throws Exception {
        V1Pod waiting = pod(UID, s -> s).status(new V1PodStatus().addContainerStatusesItem(new V1ContainerStatus()
                .name("app").state(new V1ContainerState().waiting(new V1ContainerStateWaiting()
                        .reason("CrashLoopBackOff")))));
        pods.put(waiting);
        publishNow(attributes("reloadSignal", "SIGUSR1"));
        clock.advance(Duration.ofMinutes(49));
        int reads = pods.reads().size();
        clock.advance(Duration.ofMinutes(5)); // no rotation in these minutes: nothing is tried again

        assertThat(signals).isEmpty();
        assertThat(pods.reads()).hasSize(reads);
        assertThat(agent.reloads.last("csi:" + VOLUME)).hasValueSatisfying(last -> {
            assertThat(last.delivered()).isFalse();
            assertThat(last.problem()).isEqualTo("container app is not running (waiting: CrashLoopBackOff)");
        });
    }

    @Test
    void resume_keepsTheVolumesReloadSignal() throws Exception {
        pods.put(running(pod(UID, s -> s), "containerd://c0ffee"));
        publishNow(attributes("reloadSignal", "SIGHUP"));
        agent.close();
        agent = new Agent(new ScriptedTokenSource(clock, Duration.ofHours(1)));
        assertThat(agent.volumes.resume(agent.adoption)).hasSize(1);
        assertThat(agent.reloads.request("csi:" + VOLUME)).hasValueSatisfying(r ->
                assertThat(r.container()).isEqualTo("app"));
        clock.advance(Duration.ofMinutes(61)); // the resumed volume's token, not adopted, is requested anew
        clock.advance(Duration.ofMinutes(49));
        assertThat(signals).isNotEmpty();
    }

    @Test
    void unpublish_forgetsTheReloadSignal() throws Exception {
        pods.put(running(pod(UID, s -> s), "containerd://c0ffee"));
        publishNow(attributes("reloadSignal", "SIGHUP"));
        agent.volumes.unpublish(VOLUME, target().toString());
        assertThat(agent.reloads.request("csi:" + VOLUME)).isEmpty();
    }

    /** Publishes the volume and runs the first write; fails if it is not done then. */
    private void publishNow(Map<String, String> attributes) throws Exception {
        CompletableFuture<Void> published = agent.publish(target(), attributes);
        clock.runDue();
        assertThat(published).isCompleted();
    }

    /** The pod with its container {@code app} running as {@code containerId}. */
    private static V1Pod running(V1Pod pod, String containerId) {
        return pod.status(new V1PodStatus().addContainerStatusesItem(new V1ContainerStatus().name("app")
                .containerID(containerId).state(new V1ContainerState().running(new V1ContainerStateRunning()))));
    }
}
