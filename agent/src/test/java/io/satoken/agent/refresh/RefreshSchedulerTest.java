package io.satoken.agent.refresh;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.google.common.jimfs.Configuration;
import com.google.common.jimfs.Jimfs;
import io.satoken.agent.projection.Projection;
import io.satoken.agent.projection.TokenDirectory;
import io.satoken.agent.testing.FakeClock;
import io.satoken.agent.testing.RefreshHarness;
import io.satoken.agent.testing.ScriptedTokenSource;
import io.satoken.agent.token.BoundObjectRef;
import io.satoken.agent.token.IssuedToken;
import io.satoken.agent.token.TokenCache;
import io.satoken.agent.token.TokenKey;
import io.satoken.agent.token.TokenSourceException;
import io.satoken.agent.write.AtomicWriter;
import io.satoken.agent.write.FileContent;
import io.satoken.agent.write.FileOwnerException;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.FileSystem;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

class RefreshSchedulerTest {

    private static final Instant START = RefreshHarness.START;
    private static final TokenKey VAULT = new TokenKey("ns", "app", List.of("vault"), 3600, BoundObjectRef.NONE);
    private static final TokenKey STS = new TokenKey("ns", "app", List.of("sts"), 3600, BoundObjectRef.NONE);

    private final FileSystem fs = Jimfs.newFileSystem(Configuration.unix().toBuilder()
            .setAttributeViews("basic", "owner", "posix", "unix").build());
    private final List<String> writes = new ArrayList<>();
    private final List<String> failures = new ArrayList<>();
    /** What {@link RefreshListener#refreshFailed} was told, one line per directory. */
    private final List<String> refreshFailures = new ArrayList<>();
    private final RefreshHarness refresh = RefreshHarness.builder().listener(new RefreshListener() {
        @Override
        public void written(TokenDirectory dir, Projection p, IssuedToken token, boolean rotation) {
            writes.add(dir.name() + "/" + p.path() + (rotation ? " rotated" : " written"));
        }

        @Override
        public void fetchFailed(TokenKey key, List<TokenDirectory> dirs, TokenSourceException error, boolean serving) {
            failures.add(dirs.stream().map(TokenDirectory::name).toList() + (serving ? " serving: " : " ")
                    + error.getMessage());
        }

        @Override
        public void refreshFailed(TokenDirectory dir, TokenKey key, TokenSourceException error, boolean serving) {
            refreshFailures.add(dir.name() + (serving ? " serving: " : " ") + error.getMessage());
        }
    }).build();
    private final FakeClock clock = refresh.clock();
    private final ScriptedTokenSource source = refresh.source();
    private final TokenCache cache = refresh.cache();
    private final RefreshScheduler scheduler = refresh.scheduler();

    @AfterEach
    void close() throws IOException {
        refresh.close();
        fs.close();
    }

    @Test
    void token_isWrittenAtOnceAndReissuedAtEightyPercentOfItsTtl() throws Exception {
        Path dir = dir("a");
        scheduler.put(new TokenDirectory("a", dir, List.of(file(VAULT, "token"))));
        clock.runDue();
        assertThat(read(dir, "token")).isEqualTo("token-1");
        assertThat(clock.nextTimer()).isEqualTo(START.plus(Duration.ofMinutes(48)));

        clock.advance(Duration.ofMinutes(48));
        assertThat(source.calls()).isEqualTo(2);
        assertThat(read(dir, "token")).isEqualTo("token-2");
        assertThat(clock.nextTimer()).isEqualTo(START.plus(Duration.ofMinutes(48 + 48)));
        assertThat(writes).containsExactly("a/token written", "a/token rotated");
    }

    @Test
    void put_answersWithTheFirstWrite_completedOnceEveryFileOfTheDirectoryIsWritten() throws Exception {
        Path dir = dir("a");
        CompletableFuture<Void> first = scheduler.put(new TokenDirectory("a", dir,
                List.of(file(VAULT, "vault"), file(STS, "sts"))));
        assertThat(first).isNotDone();
        clock.runDue();
        assertThat(first).isCompletedWithValue(null);
        assertThat(read(dir, "vault")).startsWith("token-");
        assertThat(read(dir, "sts")).startsWith("token-");
    }

    @Test
    void put_firstWriteFailsWithTheFetchFailure_andTheListenerIsToldOfIt() throws Exception {
        TokenSourceException refused = new TokenSourceException("403 forbidden");
        source.failAlways(refused);
        CompletableFuture<Void> first = scheduler.put(new TokenDirectory("a", dir("a"), List.of(file(VAULT, "token"))));
        clock.runDue();
        assertThat(first).isCompletedExceptionally();
        assertThatThrownBy(first::join).cause().isInstanceOf(TokenSourceException.class)
                .hasMessageEndingWith(": 403 forbidden");
        assertThat(failures).singleElement().asString().startsWith("[a] failed to fetch token").endsWith("403 forbidden");
        assertThat(refreshFailures).as("the first write's failure is the future's").isEmpty();
        assertThat(clock.nextTimer()).as("retried all the same").isEqualTo(START.plusSeconds(1));
    }

    @Test
    void resume_aDirectoryAnEarlierRunWrote_hasEveryFailureToldToRefreshFailed_theFirstIncluded() throws Exception {
        source.failAlways(new TokenSourceException("503 unavailable"));
        scheduler.resume(new TokenDirectory("a", dir("a"), List.of(file(VAULT, "token"))));
        clock.runDue();
        assertThat(failures).singleElement().asString().startsWith("[a] ");
        assertThat(refreshFailures).singleElement().asString().startsWith("a failed to fetch")
                .endsWith("503 unavailable");
    }

    @Test
    void refreshFailed_isToldOfEachDirectoryPastItsFirstWrite_notOfTheFailureThatFailsIt() throws Exception {
        scheduler.put(new TokenDirectory("a", dir("a"), List.of(file(VAULT, "token"))));
        clock.runDue();
        source.failAlways(new TokenSourceException("503 unavailable"));
        CompletableFuture<Void> b = scheduler.put(new TokenDirectory("b", dir("b"), List.of(file(STS, "token"))));
        clock.runDue();
        assertThat(b).isCompletedExceptionally();
        assertThat(failures).singleElement().asString().startsWith("[b] ");
        assertThat(refreshFailures).as("b's first failure is its first write's").isEmpty();

        clock.advance(Duration.ofMinutes(48));
        assertThat(refreshFailures).filteredOn(f -> f.startsWith("a ")).isNotEmpty()
                .allSatisfy(f -> assertThat(f).startsWith("a serving: ").endsWith("503 unavailable"));
        assertThat(refreshFailures).as("b, kept after its first write failed").filteredOn(f -> f.startsWith("b "))
                .isNotEmpty().allSatisfy(f -> assertThat(f).startsWith("b failed to fetch").endsWith("503 unavailable"));
    }

    @Test
    void put_firstWriteFailsWhenTheNodeRefusesAnOwner_butAnotherWriteFailureIsRetried() throws Exception {
        Path dir = dir("a");
        IOException[] next = {new IOException("disk full"),
                new IOException("write failed", new FileOwnerException(dir.resolve("token"), false, 70000, "EINVAL"))};
        int[] calls = {0};
        try (RefreshHarness own = RefreshHarness.builder().clock(clock).source(source).writer(path -> payload -> {
            throw next[Math.min(calls[0]++, 1)];
        }).build()) {
            CompletableFuture<Void> first = own.scheduler().put(new TokenDirectory("a", dir, List.of(file(VAULT,
                    "token"))));
            clock.runDue();
            assertThat(first).as("a full disk is retried").isNotDone();
            clock.advance(Duration.ofSeconds(1));
            assertThat(first).isCompletedExceptionally();
            assertThatThrownBy(first::join).hasCauseInstanceOf(FileOwnerException.class);
        }
    }

    @Test
    void failures_backOffExponentiallyUpToTheCap() throws Exception {
        source.failAlways(new TokenSourceException("apiserver down"));
        scheduler.put(new TokenDirectory("a", dir("a"), List.of(file(VAULT, "token"))));
        clock.runDue();
        List<Duration> delays = new ArrayList<>();
        for (int i = 0; i < 7; i++) {
            Instant now = clock.instant();
            delays.add(Duration.between(now, clock.nextTimer()));
            clock.set(clock.nextTimer());
            clock.runDue();
        }
        assertThat(delays).extracting(Duration::toSeconds).containsExactly(1L, 2L, 4L, 8L, 16L, 30L, 30L);
        assertThat(source.calls()).isEqualTo(8);
    }

    @Test
    void retryAfter_isRespected() throws Exception {
        source.failNext(new TokenSourceException("429 too many requests", Duration.ofSeconds(45), null));
        Path dir = dir("a");
        scheduler.put(new TokenDirectory("a", dir, List.of(file(VAULT, "token"))));
        clock.runDue();
        assertThat(clock.nextTimer()).isEqualTo(START.plusSeconds(45));
        clock.advance(Duration.ofSeconds(44));
        assertThat(source.calls()).isEqualTo(1);
        clock.advance(Duration.ofSeconds(1));
        assertThat(read(dir, "token")).isEqualTo("token-2");
    }

    @Test
    void permanentRefusal_waitsTheBackoffCapAtOnce_andTellsTheListenerWhichDirectories() throws Exception {
        // 403/404/422 are not retried in a tight loop.
        source.failAlways(new TokenSourceException("404 Not Found: serviceaccounts \"app\" not found", null, true, null));
        scheduler.put(new TokenDirectory("a", dir("a"), List.of(file(VAULT, "token"))));
        scheduler.put(new TokenDirectory("b", dir("b"), List.of(file(VAULT, "token"))));
        clock.runDue();
        assertThat(clock.nextTimer()).isEqualTo(START.plusSeconds(30));
        assertThat(failures).containsExactly("[a, b] failed to fetch token " + VAULT
                + ": 404 Not Found: serviceaccounts \"app\" not found");
        assertThat(scheduler.projectionStates()).containsEntry(RefreshScheduler.State.FAILED, 2)
                .containsEntry(RefreshScheduler.State.READY, 0);
    }

    @Test
    void adoptedToken_isNeitherRequestedNorRewritten_andCountsAsWritten() throws Exception {
        // Restart adoption: the file on disk already holds the cached token.
        Path dir = dir("a");
        IssuedToken onDisk = new IssuedToken("disk-token", START.minus(Duration.ofMinutes(5)),
                START.plus(Duration.ofMinutes(55)));
        new AtomicWriter(dir, clock).write(Map.of("token",
                new FileContent("disk-token".getBytes(StandardCharsets.UTF_8), 0600, null, null)));
        assertThat(cache.adopt(VAULT, onDisk)).isTrue();

        scheduler.put(new TokenDirectory("a", dir, List.of(file(VAULT, "token"))));
        assertThat(scheduler.allWritten()).isFalse();
        clock.runDue();
        assertThat(source.calls()).isZero();
        assertThat(writes).isEmpty();
        assertThat(scheduler.allWritten()).isTrue();
        assertThat(scheduler.soonestExpiry()).contains(onDisk.expiresAt());
        assertThat(clock.nextTimer()).isEqualTo(START.plus(Duration.ofMinutes(43))); // its own 80 % point
    }

    @Test
    void writer_isTheOnePassedIn_andAFailedWriteIsRetriedWithoutANewToken() throws Exception {
        List<Map<String, FileContent>> published = new ArrayList<>();
        int[] failuresLeft = {1};
        try (RefreshHarness own = RefreshHarness.builder().clock(clock).source(source).writer(path -> payload -> {
            if (failuresLeft[0]-- > 0) {
                throw new IOException("disk full");
            }
            published.add(payload);
            return true;
        }).build()) {
            own.scheduler().put(new TokenDirectory("a", fs.getPath("/nowhere"), List.of(file(VAULT, "token"))));
            clock.runDue();
            assertThat(published).isEmpty();
            assertThat(clock.nextTimer()).isEqualTo(START.plusSeconds(1));
            clock.advance(Duration.ofSeconds(1));
            assertThat(published).hasSize(1);
            assertThat(new String(published.get(0).get("token").data(), StandardCharsets.UTF_8))
                    .isEqualTo("token-1");
            assertThat(source.calls()).isEqualTo(1);
            assertThat(own.scheduler().allWritten()).isTrue();
        }
    }

    @Test
    void projectionStates_followPendingReadyAndRefreshFailing() throws Exception {
        scheduler.put(new TokenDirectory("a", dir("a"), List.of(file(VAULT, "vault"), file(STS, "sts"))));
        assertThat(scheduler.projectionStates()).containsEntry(RefreshScheduler.State.PENDING, 2);
        clock.runDue();
        assertThat(scheduler.projectionStates()).containsEntry(RefreshScheduler.State.READY, 2);
        source.failAlways(new TokenSourceException("down"));
        clock.advance(Duration.ofMinutes(48));
        assertThat(scheduler.projectionStates()).containsEntry(RefreshScheduler.State.REFRESH_FAILING, 2);
        assertThat(failures).hasSize(2).allSatisfy(f -> assertThat(f).startsWith("[a] serving: "));
    }

    @Test
    void failedRefresh_keepsTheValidTokenOnDiskAndRecovers() throws Exception {
        Path dir = dir("a");
        scheduler.put(new TokenDirectory("a", dir, List.of(file(VAULT, "token"))));
        clock.runDue();
        source.failNext(new TokenSourceException("blip"), new TokenSourceException("blip"));

        clock.advance(Duration.ofMinutes(48)); // refresh fails
        assertThat(read(dir, "token")).isEqualTo("token-1");
        clock.advance(Duration.ofSeconds(1)); // first retry fails
        assertThat(read(dir, "token")).isEqualTo("token-1");
        clock.advance(Duration.ofSeconds(2)); // second retry succeeds
        assertThat(read(dir, "token")).isEqualTo("token-4");
        // Success resets the backoff: the next timer is the new token's refresh time.
        assertThat(clock.nextTimer()).isEqualTo(clock.instant().plus(Duration.ofMinutes(48)));
    }

    @Test
    void sharedKey_oneCallAndEveryHolderRewritten() throws Exception {
        Path a = dir("a");
        Path b = dir("b");
        scheduler.put(new TokenDirectory("a", a, List.of(file(VAULT, "token"))));
        scheduler.put(new TokenDirectory("b", b, List.of(file(VAULT, "vault-token"))));
        clock.runDue();
        assertThat(source.calls()).isEqualTo(1);
        assertThat(read(a, "token")).isEqualTo("token-1");
        assertThat(read(b, "vault-token")).isEqualTo("token-1");

        clock.advance(Duration.ofMinutes(48));
        assertThat(source.calls()).isEqualTo(2);
        assertThat(read(a, "token")).isEqualTo("token-2");
        assertThat(read(b, "vault-token")).isEqualTo("token-2");
        assertThat(clock.pendingTimers()).isEqualTo(1);
    }

    @Test
    void directory_isWrittenOnlyOnceEveryTokenItNeedsIsThere() throws Exception {
        Path dir = dir("a");
        source.failNext(new TokenSourceException("first call fails"));
        scheduler.put(new TokenDirectory("a", dir, List.of(file(VAULT, "vault"), file(STS, "sts"))));
        clock.runDue();
        assertThat(Files.exists(dir.resolve("vault"))).isFalse();
        assertThat(Files.exists(dir.resolve("sts"))).isFalse();
        clock.advance(Duration.ofSeconds(1));
        assertThat(read(dir, "vault")).startsWith("token-");
        assertThat(read(dir, "sts")).startsWith("token-");
    }

    @Test
    void remove_leavesNoTimerAndNoCachedToken() throws Exception {
        // TM-10: a volume's teardown drops the tokens only it used (the cache has no per-pod sweep: keys
        // are dropped as their last directory goes)
        scheduler.put(new TokenDirectory("a", dir("a"), List.of(file(VAULT, "token"), file(STS, "sts"))));
        scheduler.put(new TokenDirectory("b", dir("b"), List.of(file(VAULT, "token"))));
        clock.runDue();
        assertThat(clock.pendingTimers()).isEqualTo(2);

        scheduler.remove("a");
        assertThat(clock.pendingTimers()).isEqualTo(1); // VAULT is still used by b
        assertThat(cache.peek(STS)).isEmpty();

        scheduler.remove("b");
        assertThat(clock.pendingTimers()).isZero();
        assertThat(cache.peek(VAULT)).isEmpty();
        clock.advance(Duration.ofHours(2));
        assertThat(source.calls()).isEqualTo(2);
    }

    @Test
    void removeDuringBackoff_cancelsTheRetry() throws Exception {
        source.failAlways(new TokenSourceException("down"));
        scheduler.put(new TokenDirectory("a", dir("a"), List.of(file(VAULT, "token"))));
        clock.runDue();
        assertThat(clock.pendingTimers()).isEqualTo(1);
        scheduler.remove("a");
        assertThat(clock.pendingTimers()).isZero();
    }

    @Test
    void replacingADirectory_dropsTokensItNoLongerUses() throws Exception {
        Path dir = dir("a");
        scheduler.put(new TokenDirectory("a", dir, List.of(file(VAULT, "vault"), file(STS, "sts"))));
        clock.runDue();
        scheduler.put(new TokenDirectory("a", dir, List.of(file(VAULT, "vault"))));
        clock.runDue();
        assertThat(cache.peek(STS)).isEmpty();
        assertThat(clock.pendingTimers()).isEqualTo(1);
        assertThat(source.calls()).isEqualTo(2); // the kept token was not re-minted
    }

    @Test
    void close_cancelsEveryTimer() throws Exception {
        scheduler.put(new TokenDirectory("a", dir("a"), List.of(file(VAULT, "token"), file(STS, "sts"))));
        clock.runDue();
        scheduler.close();
        assertThat(clock.pendingTimers()).isZero();
    }

    private Path dir(String name) throws IOException {
        return Files.createDirectories(fs.getPath("/var/lib/satoken", name));
    }

    private static Projection file(TokenKey key, String path) {
        return new Projection(key, path, 0600, null, null);
    }

    private static String read(Path dir, String path) throws IOException {
        return Files.readString(dir.resolve(path));
    }
}
