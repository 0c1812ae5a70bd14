package io.satoken.agent.csi;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.grpc.Status;
import io.kubernetes.client.openapi.models.V1CSIVolumeSource;
import io.kubernetes.client.openapi.models.V1Container;
import io.kubernetes.client.openapi.models.V1ObjectMeta;
import io.kubernetes.client.openapi.models.V1Pod;
import io.kubernetes.client.openapi.models.V1PodSecurityContext;
import io.kubernetes.client.openapi.models.V1PodSpec;
import io.kubernetes.client.openapi.models.V1Volume;
import io.satoken.agent.pods.PodEvents;
import io.satoken.agent.projection.PodIdentity;
import io.satoken.agent.refresh.Backoff;
import io.satoken.agent.refresh.RefreshScheduler;
import io.satoken.agent.refresh.TokenAdoption;
import io.satoken.agent.testing.FakeClock;
import io.satoken.agent.testing.FakeMounter;
import io.satoken.agent.testing.FixedRandom;
import io.satoken.agent.testing.KubeletTokenJson;
import io.satoken.agent.testing.MapPodReader;
import io.satoken.agent.testing.PodInfo;
import io.satoken.agent.token.DeliveredTokens;
import io.satoken.agent.token.IssuedToken;
import io.satoken.agent.token.IssuerKeys;
import io.satoken.agent.token.RefreshPolicy;
import io.satoken.agent.token.SignatureCheck;
import io.satoken.agent.token.TokenCache;
import io.satoken.common.logging.LogFormat;
import io.satoken.common.logging.LogLevel;
import io.satoken.common.testing.CapturedLogs;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code tokenSource: kubelet} end to end inside the agent, on a fake clock and a real temporary directory: the
 * kubelet's publishes and republishes go through {@link CsiVolumes}, the tokens through {@link DeliveredTokens}, the
 * cache ({@link RefreshPolicy#untilExpiry()}) and the refresh scheduler to an {@code AtomicWriter}, as the agent
 * wires them. What is written and when, what is refused, and what is kept or logged: never a token.
 */
class KubeletMintedVolumesTest {

    private static final Instant START = Instant.parse("2026-01-01T00:00:00Z");
    private static final String UID = "0b7e6f0a-1111-2222-3333-444455556666";
    private static final String VOLUME = "csi-4f1c0e9d7a3b";
    private static final String NODE = "node-a";
    private static final PodIdentity WEB = new PodIdentity("shop", "web-0", UID, "app");
    private static final long LIFETIME = 600;

    @TempDir
    Path kubeletDir;

    private final FakeClock clock = new FakeClock(START);
    private final KubeletTokenJson kubelet = new KubeletTokenJson();
    private final FakeMounter mounter = new FakeMounter();
    private final MapPodReader pods = new MapPodReader();
    private final List<String> events = new ArrayList<>();
    private Agent agent;

    /** The parts AgentRuntime wires for tokenSource: kubelet; a second one over the same dirs is a restart. */
    private final class Agent implements AutoCloseable {
        final DeliveredTokens delivered = new DeliveredTokens(clock);
        final TokenCache cache = new TokenCache(delivered, RefreshPolicy.untilExpiry(), clock);
        final RefreshScheduler scheduler = new RefreshScheduler(cache, clock,
                new Backoff(Duration.ofSeconds(1), Duration.ofSeconds(30), FixedRandom.highest()), clock,
                new PodEvents((pod, reason, message) -> events.add(reason + ": " + message), null));
        final VolumeStore store = new VolumeStore(kubeletDir.resolve("plugins/tokens.satoken.io/volumes"));
        final CsiVolumes volumes;
        final TokenAdoption adoption;

        Agent() throws IOException {
            store.create();
            SignatureCheck keys = IssuerKeys.parse(kubelet.publicJwksJson());
            adoption = new TokenAdoption(cache, Optional.empty(), keys);
            volumes = new CsiVolumes(kubeletDir.resolve("pods"), NODE, store, mounter, pods, scheduler, null, delivered,
                    clock);
        }

        /** The kubelet's NodePublishVolume, its tokens in the volume context. */
        CompletableFuture<Void> publish(Map<String, String> attributes, Map<String, IssuedToken> tokens)
                throws CsiException {
            Map<String, String> context = new java.util.HashMap<>(attributes);
            context.put(KubeletTokenJson.KEY, KubeletTokenJson.json(tokens));
            return volumes.publish(VOLUME, target().toString(), context, Map.of());
        }

        @Override
        public void close() {
            scheduler.close();
        }
    }

    @BeforeEach
    void start() throws IOException {
        V1PodSpec spec = new V1PodSpec().nodeName(NODE).serviceAccountName("app")
                .securityContext(new V1PodSecurityContext().runAsUser(1000L).fsGroup(2000L))
                .addContainersItem(new V1Container().name("app"))
                .addVolumesItem(new V1Volume().name("tokens").csi(new V1CSIVolumeSource().driver("tokens.satoken.io")
                        .readOnly(true)));
        pods.put(new V1Pod().metadata(new V1ObjectMeta().namespace("shop").name("web-0").uid(UID)).spec(spec));
        agent = new Agent();
    }

    @AfterEach
    void stop() {
        agent.close();
    }

    private Path target() {
        return kubeletDir.resolve("pods").resolve(UID).resolve("volumes/kubernetes.io~csi/tokens/mount");
    }

    private static Map<String, String> vault() {
        return PodInfo.attributes(WEB, "audience", "vault", "expirationSeconds", String.valueOf(LIFETIME));
    }

    private IssuedToken mint(Duration after) {
        return kubelet.token(WEB, "vault", START.plus(after), LIFETIME);
    }

    private String file() throws IOException {
        return Files.readString(target().resolve("token"));
    }

    private Path version() throws IOException {
        return Files.readSymbolicLink(target().resolve("..data"));
    }

    @Test
    void publish_writesTheKubeletsToken_withThePodsOwnerAndMode() throws Exception {
        IssuedToken first = mint(Duration.ZERO);

        CompletableFuture<Void> published = agent.publish(vault(), Map.of("vault", first));
        clock.runDue();

        assertThat(published).isCompletedWithValue(null);
        assertThat(file()).isEqualTo(first.token());
        // PV-16, PV-17: the pod's runAsUser and fsGroup, as for the agent's own tokens
        assertThat(agent.store.loadAll().get(0).files().get(0).mode()).isEqualTo(0640);
        assertThat(agent.store.loadAll().get(0).files().get(0).uid()).isEqualTo(1000);
    }

    @Test
    void republish_withTheSameToken_writesNothing() throws Exception {
        IssuedToken first = mint(Duration.ZERO);
        agent.publish(vault(), Map.of("vault", first));
        clock.runDue();
        Path written = version();

        for (int i = 0; i < 5; i++) {
            clock.advance(Duration.ofSeconds(75));
            assertThat(agent.publish(vault(), Map.of("vault", first))).isCompletedWithValue(null);
        }
        clock.runDue();

        assertThat(version()).as("..data after five republishes of the same token").isEqualTo(written);
        assertThat(file()).isEqualTo(first.token());
        assertThat(clock.pendingTimers()).as("the key's one timer, at the token's expiry").isEqualTo(1);
    }

    @Test
    void republish_withANewToken_switchesItInAtOnce() throws Exception {
        agent.publish(vault(), Map.of("vault", mint(Duration.ZERO)));
        clock.runDue();
        Path before = version();

        clock.advance(Duration.ofSeconds(485)); // the kubelet refreshes at ~80 % of the 600 s
        IssuedToken next = mint(Duration.ofSeconds(485));
        agent.publish(vault(), Map.of("vault", next));
        clock.runDue(); // no time passes: the new token is written at the republish

        assertThat(file()).isEqualTo(next.token());
        assertThat(version()).as("a new version behind ..data").isNotEqualTo(before);
        assertThat(Files.exists(target().resolveSibling("mount").resolve(before))).as("the old version, removed")
                .isFalse();
        assertThat(events).isEmpty();
    }

    @Test
    void theAgentsOwnRefreshPoint_passingBeforeTheKubeletsNextToken_raisesNoWarning_expiryDoes() throws Exception {
        IssuedToken first = mint(Duration.ZERO);
        agent.publish(vault(), Map.of("vault", first));
        clock.runDue();

        clock.advance(Duration.ofSeconds(599)); // past 80 % and the 24 h rule's peers, not yet expired
        assertThat(events).as("Warning Events before expiry").isEmpty();
        assertThat(file()).isEqualTo(first.token());

        clock.advance(Duration.ofSeconds(5)); // expired, and the kubelet delivered nothing newer
        assertThat(events).isNotEmpty().allSatisfy(e -> assertThat(e).contains("the kubelet").contains("vault")
                .doesNotContain(first.token()));
    }

    @Test
    void unlistedAudience_failsThePublish_namingTheListedAudiences_andMountsNothing() {
        Map<String, String> sts = PodInfo.attributes(WEB, "audience", "sts");

        assertThatThrownBy(() -> agent.publish(sts, Map.of("vault", mint(Duration.ZERO))))
                .isInstanceOfSatisfying(CsiException.class, e -> {
                    assertThat(e.code()).isEqualTo(Status.Code.FAILED_PRECONDITION);
                    assertThat(e.getMessage()).contains("volumeAttributes.audience: \"sts\"")
                            .contains("lists spec.tokenRequests audiences [\"vault\"]");
                });
        assertThat(mounter.mounted()).isEmpty();
    }

    @Test
    void aTokenOfAnotherPod_failsThePublish_andWritesNothing() {
        PodIdentity other = new PodIdentity("shop", "web-1", "9d0c-other", "app");
        IssuedToken foreign = kubelet.token(other, "vault", START, LIFETIME);

        assertThatThrownBy(() -> agent.publish(vault(), Map.of("vault", foreign)))
                .isInstanceOfSatisfying(CsiException.class, e -> {
                    assertThat(e.code()).isEqualTo(Status.Code.INVALID_ARGUMENT);
                    assertThat(e.getMessage()).contains("kubernetes.io.pod.name is \"web-1\"")
                            .doesNotContain(foreign.token());
                });
        assertThat(Files.exists(target())).isFalse();
    }

    @Test
    void restart_adoptsTheTokenOnDisk_andTheNextRepublishWithIt_writesNothing() throws Exception {
        IssuedToken first = mint(Duration.ZERO);
        agent.publish(vault(), Map.of("vault", first));
        clock.runDue();
        Path written = version();
        agent.close();

        clock.advance(Duration.ofSeconds(30));
        agent = new Agent();
        assertThat(agent.volumes.resume(agent.adoption)).hasSize(1);
        clock.runDue();
        assertThat(version()).as("..data after the restart").isEqualTo(written);
        clock.advance(Duration.ofSeconds(60));
        agent.publish(vault(), Map.of("vault", first));
        clock.runDue();

        assertThat(version()).as("..data after the first republish").isEqualTo(written);
        assertThat(events).isEmpty();
    }

    @Test
    void neitherTheVolumeRecordNorAnyLogLine_holdsAToken() throws Exception {
        IssuedToken first = mint(Duration.ZERO);
        IssuedToken next = mint(Duration.ofSeconds(480));
        List<String> lines;
        try (CapturedLogs logs = CapturedLogs.start(LogLevel.DEBUG, LogFormat.TEXT)) {
            agent.publish(vault(), Map.of("vault", first));
            clock.runDue();
            clock.advance(Duration.ofSeconds(480));
            agent.publish(vault(), Map.of("vault", next));
            clock.runDue();
            assertThatThrownBy(() -> agent.publish(PodInfo.attributes(WEB, "audience", "sts"),
                    Map.of("vault", next)));
            clock.advance(Duration.ofSeconds(700)); // expired: the failure is logged too
            lines = logs.lines();
        }

        assertThat(String.join("\n", lines)).contains("from the kubelet, in volume_context");
        List<String> stored;
        try (Stream<Path> files = Files.walk(kubeletDir.resolve("plugins/tokens.satoken.io/volumes"))) {
            stored = files.filter(Files::isRegularFile).map(f -> {
                try {
                    return Files.readString(f, StandardCharsets.UTF_8);
                } catch (IOException e) {
                    throw new java.io.UncheckedIOException(e);
                }
            }).toList();
        }
        assertThat(stored).isNotEmpty();
        for (IssuedToken token : List.of(first, next)) {
            String signature = token.token().substring(token.token().lastIndexOf('.') + 1);
            assertThat(lines).noneMatch(l -> l.contains(signature));
            assertThat(stored).noneMatch(s -> s.contains(signature));
            assertThat(events).noneMatch(e -> e.contains(signature));
        }
    }
}
