package io.satoken.agent.pods;

import static org.assertj.core.api.Assertions.assertThat;

import io.kubernetes.client.openapi.models.V1Container;
import io.kubernetes.client.openapi.models.V1ObjectMeta;
import io.kubernetes.client.openapi.models.V1Pod;
import io.kubernetes.client.openapi.models.V1PodSpec;
import io.kubernetes.client.openapi.models.V1PodStatus;
import io.satoken.agent.metrics.AgentMetrics;
import io.satoken.agent.projection.Projection;
import io.satoken.agent.projection.TokenDirectory;
import io.satoken.agent.refresh.Backoff;
import io.satoken.agent.refresh.RefreshListener;
import io.satoken.agent.refresh.RefreshScheduler;
import io.satoken.agent.testing.FakeClock;
import io.satoken.agent.testing.FixedRandom;
import io.satoken.agent.testing.ScriptedTokenSource;
import io.satoken.agent.token.BoundObjectRef;
import io.satoken.agent.token.RefreshPolicy;
import io.satoken.agent.token.TokenAdoption;
import io.satoken.agent.token.TokenCache;
import io.satoken.agent.token.TokenInfo;
import io.satoken.agent.token.TokenKey;
import io.satoken.agent.token.TokenSourceException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Random;
import java.util.Set;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class PodTokensTest {
    private static final Instant START = Instant.parse("2026-01-01T00:00:00Z");
    private static final String TWO_FILES = """
            - path: vault-token
              audience: vault
            - path: sts/token
              audience: sts
              expirationSeconds: 7200
            """;

    @TempDir
    Path root;

    private final FakeClock clock = new FakeClock(START);
    private final ScriptedTokenSource source = new ScriptedTokenSource(clock, Duration.ofHours(1));
    private final TokenCache cache = new TokenCache(source, new RefreshPolicy(Duration.ZERO, new Random()), clock);
    private final AgentMetrics metrics = new AgentMetrics(clock);
    private final List<String> events = new ArrayList<>();
    private PodTokens pods;
    /** The scheduler reports to the pods, which are built on the scheduler: this forwards to them. */
    private final RefreshScheduler scheduler = new RefreshScheduler(cache, clock,
            new Backoff(Duration.ofSeconds(1), Duration.ofSeconds(30), FixedRandom.highest()), clock,
            new RefreshListener() {
                @Override
                public void fetchFailed(TokenKey key, List<TokenDirectory> dirs, TokenSourceException error,
                        boolean serving) {
                    pods.fetchFailed(key, dirs, error, serving);
                }
            });

    @BeforeEach
    void create() {
        pods = new PodTokens(root, scheduler, cache, new TokenAdoption(cache, Optional.empty()),
                (pod, reason, message) -> events.add(pod.getMetadata().getName() + " " + reason + ": " + message),
                metrics);
    }

    @AfterEach
    void close() {
        scheduler.close();
    }

    @Test
    void annotatedPod_getsEveryFileInItsOwnDirectory_boundToThePod() throws Exception {
        pods.apply(pod("web-0", "uid-1", TWO_FILES));
        clock.runDue();
        Path dir = root.resolve("pods/uid-1");
        assertThat(Files.readString(dir.resolve("vault-token"))).startsWith("token-");
        assertThat(Files.readString(dir.resolve("sts/token"))).startsWith("token-");
        assertThat(source.callKeys()).hasSize(2).allSatisfy(key -> {
            assertThat(key.boundObject().uid()).isEqualTo("uid-1");
            assertThat(key.serviceAccount()).isEqualTo("app");
        });
        assertThat(source.callKeys()).extracting(TokenKey::expirationSeconds).containsExactlyInAnyOrder(3600L, 7200L);
    }

    @Test
    void podWithoutTheAnnotation_getsNothing() {
        pods.apply(pod("plain", "uid-2", null));
        clock.runDue();
        assertThat(root.resolve("pods/uid-2")).doesNotExist();
        assertThat(source.calls()).isZero();
    }

    @Test
    void updateWithTheSameAnnotation_changesNothing() throws Exception {
        pods.apply(pod("web-0", "uid-1", TWO_FILES));
        clock.runDue();
        V1Pod running = pod("web-0", "uid-1", TWO_FILES);
        running.setStatus(new V1PodStatus().phase("Running"));
        pods.apply(running);
        clock.runDue();
        assertThat(source.calls()).isEqualTo(2);
    }

    @Test
    void invalidAnnotation_isAWarningEventAndAMetric_andOtherPodsAreUnaffected() throws Exception {
        pods.apply(pod("bad", "uid-3", "- path: /etc/passwd\n  audience: vault\n"));
        pods.apply(pod("good", "uid-4", TWO_FILES));
        clock.runDue();
        assertThat(events).singleElement().asString()
                .startsWith("bad InvalidTokenProjection: satoken.io/projections[0].path")
                .contains("/etc/passwd");
        assertThat(root.resolve("pods/uid-3")).doesNotExist();
        assertThat(root.resolve("pods/uid-4/vault-token")).exists();
        assertThat(metrics.registry().scrape()).contains("satoken_projections_invalid_total{source=\"pod\"} 1.0");
    }

    @Test
    void invalidEdit_keepsThePreviousProjectionsRunning() throws Exception {
        pods.apply(pod("web-0", "uid-1", TWO_FILES));
        clock.runDue();
        pods.apply(pod("web-0", "uid-1", "- path: a\n  expirationSeconds: 60\n"));
        clock.advance(Duration.ofMinutes(48));
        assertThat(events).singleElement().asString().contains("expirationSeconds", "previous projections keep running");
        assertThat(Files.readString(root.resolve("pods/uid-1/vault-token"))).isEqualTo("token-3");
    }

    @Test
    void finishedOrDeletedPod_losesItsTokensAndDirectory() throws Exception {
        // TM-10
        pods.apply(pod("job", "uid-5", TWO_FILES));
        pods.apply(pod("web", "uid-6", TWO_FILES));
        clock.runDue();
        assertThat(cache.size()).isEqualTo(4);

        V1Pod done = pod("job", "uid-5", TWO_FILES);
        done.setStatus(new V1PodStatus().phase("Succeeded"));
        pods.apply(done);
        pods.delete(pod("web", "uid-6", TWO_FILES));

        assertThat(root.resolve("pods/uid-5")).doesNotExist();
        assertThat(root.resolve("pods/uid-6")).doesNotExist();
        assertThat(cache.size()).isZero();
        assertThat(clock.pendingTimers()).isZero();
    }

    @Test
    void removedAnnotation_removesTheDirectory() throws Exception {
        pods.apply(pod("web-0", "uid-1", TWO_FILES));
        clock.runDue();
        pods.apply(pod("web-0", "uid-1", null));
        assertThat(root.resolve("pods/uid-1")).doesNotExist();
    }

    @Test
    void firstSync_removesDirectoriesOfPodsThatNoLongerExist() throws Exception {
        Files.createDirectories(root.resolve("pods/gone-uid/..2026_01_01_00_00_00.1"));
        Files.createDirectories(root.resolve("pods/live-uid"));
        pods.apply(pod("web-0", "uid-1", TWO_FILES));
        clock.runDue();

        assertThat(pods.synced(Set.of("live-uid", "uid-1"))).containsExactly("gone-uid");
        assertThat(root.resolve("pods/gone-uid")).doesNotExist();
        assertThat(root.resolve("pods/live-uid")).exists();
        assertThat(root.resolve("pods/uid-1/vault-token")).exists();
    }

    @Test
    void refusedTokenRequest_isATokenRequestFailedEventOnThePod() {
        source.failAlways(new TokenSourceException(
                "TokenRequest for ns/app failed: 404 Not Found: serviceaccounts \"app\" not found", null, true, null));
        pods.apply(pod("web-0", "uid-1", "- path: token\n  audience: vault\n"));
        clock.runDue();
        assertThat(events).singleElement().asString()
                .startsWith("web-0 TokenRequestFailed: token for [token]: failed to fetch token")
                .contains("serviceaccounts \"app\" not found");
    }

    @Test
    void clockSkew_isATokenClockSkewEventOnThePod_andNothingForOtherDirectories() throws Exception {
        pods.apply(pod("web-0", "uid-1", "- path: token\n  audience: vault\n"));
        TokenDirectory podDir = new TokenDirectory("pod:uid-1", root.resolve("pods/uid-1"), List.of());
        Projection file = new Projection(new TokenKey("ns", "app", List.of("vault"), 3600,
                BoundObjectRef.pod("web-0", "uid-1")), "token", 0644, null, null);
        TokenInfo ahead = new TokenInfo(null, "issuer", "system:serviceaccount:ns:app", List.of("vault"),
                START.plusSeconds(90), null, START.plusSeconds(3690), "uid-1");

        pods.clockSkew(podDir, file, ahead);
        pods.clockSkew(new TokenDirectory("static:/etc/x", root.resolve("x"), List.of()), file, ahead);

        assertThat(events).singleElement().asString().startsWith("web-0 TokenClockSkew: token for token was issued at "
                + START.plusSeconds(90));
    }

    private static V1Pod pod(String name, String uid, String annotation) {
        V1ObjectMeta meta = new V1ObjectMeta().name(name).namespace("ns").uid(uid);
        if (annotation != null) {
            meta.setAnnotations(Map.of("satoken.io/projections", annotation));
        }
        return new V1Pod().metadata(meta).spec(new V1PodSpec().serviceAccountName("app").nodeName("node-a")
                .addContainersItem(new V1Container().name("app").image("busybox")));
    }
}
