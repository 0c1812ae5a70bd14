package io.satoken.agent.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.satoken.agent.projection.Projection;
import io.satoken.agent.projection.TokenDirectory;
import io.satoken.agent.reads.ReadTracker;
import io.satoken.agent.testing.FakeClock;
import io.satoken.agent.token.BoundObjectRef;
import io.satoken.agent.token.IssuedToken;
import io.satoken.agent.token.LocalIssuer;
import io.satoken.agent.token.TokenKey;
import java.io.IOException;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Locale;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The demo's pipeline on a fake clock: its status endpoint answers {@code explain}, and its stale reader is found
 * not to re-read its token at 90 % of the old token's lifetime. Opens reach the read watching through the kernel's
 * inotify, on its own thread, so a test waits (within a bound) for the stale reader's open to be seen; time itself
 * only moves when the test moves it.
 */
class DemoRunTest {

    private static final Instant START = Instant.parse("2026-01-01T00:00:00Z");
    private static final long TTL_SECONDS = 30;

    @TempDir
    Path tmp;

    private final FakeClock clock = new FakeClock(START);
    private final StringWriter out = new StringWriter();
    private Path tokens;
    private Path socket;
    private Path config;
    private DemoRun run;

    @BeforeEach
    void files() throws IOException {
        assumeTrue(System.getProperty("os.name").toLowerCase(Locale.ROOT).contains("linux"), "inotify is Linux's");
        tokens = Files.createDirectory(tmp.resolve("tokens"));
        socket = tmp.resolve(DemoCommand.STATUS_SOCKET);
        config = DemoCommand.writeExplainConfig(tmp, socket);
    }

    @AfterEach
    void stop() {
        if (run != null) {
            run.close();
        }
    }

    @Test
    void staleReader_isReportedTokenNotReread_afterItsTokenRotates() {
        start(true);
        awaitStaleReadSeen();

        clock.advance(Duration.ofSeconds(25)); // past 80 % of 30 s, whatever the jitter: every token rotated
        assertThat(run.rotations()).isEqualTo(2);
        assertThat(run.notReread()).isZero();
        clock.advance(Duration.ofSeconds(3)); // past 90 % of the old token's lifetime

        assertThat(run.notReread()).isEqualTo(1);
        assertThat(out.toString()).containsOnlyOnce("stale reader: opened " + tokens.resolve("vault/token") + " once")
                .contains("TokenNotReread " + tokens.resolve("vault/token") + ": not opened since its token rotated")
                .doesNotContain("TokenNotReread " + tokens.resolve("db/token"));
    }

    @Test
    void explain_onTheDemosSocket_showsTheStaleReadersFileNotReread() {
        start(true);
        awaitStaleReadSeen();
        clock.advance(Duration.ofSeconds(28));

        Result r = explain(tokens.resolve("vault/token"));

        assertThat(r.exit).as(r.err).isZero();
        assertThat(r.out).contains("Static projection", "directory " + tokens, "audiences:      vault",
                "the new token was not opened", "reported TokenNotReread at");
    }

    @Test
    void withoutStaleReader_nothingIsReported_andExplainSeesNoReader() {
        start(false);
        clock.advance(Duration.ofSeconds(28));

        Result r = explain(tokens.resolve("vault/token"));

        assertThat(run.notReread()).isZero();
        assertThat(out.toString()).doesNotContain("TokenNotReread").doesNotContain("stale reader");
        assertThat(r.exit).as(r.err).isZero();
        assertThat(r.out).contains("last read:      none seen since the agent started");
    }

    @Test
    void explainConfig_namesTheSocket_andParsesAsAConfig() throws IOException {
        assertThat(Files.readString(config)).contains("statusSocket: " + socket);
        assertThat(DemoCommand.explainCommand(config, tokens.resolve("vault/token")))
                .isEqualTo("agent/bin/satoken-agent explain --config " + config + " " + tokens.resolve("vault/token"));

        Result r = explain(tokens.resolve("vault/token")); // nothing serves yet: the config is read, the socket is not

        assertThat(r.exit).isEqualTo(1);
        assertThat(r.err).contains("cannot ask the agent at " + socket);
    }

    @Test
    void staleReader_readsOnlyTheFirstTokenOfItsFile() throws IOException {
        Path file = Files.writeString(tmp.resolve("token"), "first");
        StringWriter said = new StringWriter();
        StaleReader reader = new StaleReader(file, clock, new PrintWriter(said, true));
        Projection projection = new Projection(new TokenKey("demo", "app", List.of("vault"), TTL_SECONDS,
                BoundObjectRef.NONE), "token", 0600, null, null);
        TokenDirectory dir = new TokenDirectory("demo", tmp, List.of(projection));
        IssuedToken token = new IssuedToken("not-a-real-token", START, START.plusSeconds(TTL_SECONDS));

        reader.written(dir, projection, token, false);
        Files.delete(file); // were it read again, it would say it cannot be
        reader.written(dir, projection, token, true);

        assertThat(said.toString().lines()).singleElement().asString()
                .isEqualTo(START + " stale reader: opened " + file + " once; it will not open it again");
    }

    private void start(boolean staleReader) {
        List<Projection> projections = List.of(projection("vault"), projection("db"));
        run = new DemoRun(LocalIssuer.generate(DemoCommand.ISSUER, clock), clock, clock,
                new TokenDirectory("demo", tokens, projections), socket, staleReader, new PrintWriter(out, true));
        run.start();
        clock.runDue();
        assertThat(run.serving()).as(out.toString()).isTrue();
        assertThat(run.writes()).isEqualTo(2);
    }

    private static Projection projection(String name) {
        return new Projection(new TokenKey("demo", "app", List.of(name), TTL_SECONDS, BoundObjectRef.NONE),
                name + "/token", 0600, null, null);
    }

    /** Waits, within 10 s of wall time, until the read watching has seen the stale reader's open. */
    private void awaitStaleReadSeen() {
        Instant deadline = Instant.now().plusSeconds(10);
        while (true) {
            ReadTracker.Reads seen = run.tracker().reads(tokens, "vault/token").orElse(null);
            if (seen != null && seen.lastRead() != null) {
                return;
            }
            assertThat(Instant.now()).as("the stale reader's open seen within 10 s").isBefore(deadline);
            Thread.onSpinWait();
        }
    }

    private record Result(int exit, String out, String err) { }

    private Result explain(Path file) {
        StringWriter o = new StringWriter();
        StringWriter e = new StringWriter();
        int exit = AgentCommand.execute(new PrintWriter(o, true), new PrintWriter(e, true), "explain", "--config",
                config.toString(), file.toString());
        return new Result(exit, o.toString(), e.toString());
    }
}
