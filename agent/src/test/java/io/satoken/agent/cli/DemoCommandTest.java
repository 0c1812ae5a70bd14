package io.satoken.agent.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.Base64;
import java.util.regex.Pattern;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Runs {@code satoken-agent demo} in-process for real (3 s of wall time, the one test that must: the
 * demo wires the real clock and timers), then checks its output with {@code verify}.
 */
class DemoCommandTest {

    @TempDir
    static Path dir;
    private static Result demo;

    record Result(int exit, String out, String err) { }

    @BeforeAll
    static void runDemo() {
        demo = run("demo", "--dir", dir.toString(), "--duration", "3s", "--ttl", "2s", "--tokens", "2",
                "--stale-reader");
    }

    @Test
    void demo_exitsZeroAfterItsDuration() {
        assertThat(demo.exit).as(demo.err).isZero();
    }

    @Test
    void demo_writesEveryTokenAndRotatesIt() {
        assertThat(lines(demo.out, "wrote")).isEqualTo(2);
        // a 2 s token is refreshed at 80 % (1.6 s minus jitter), so each rotates at least once in 3 s
        assertThat(lines(demo.out, "rotated")).isGreaterThanOrEqualTo(2);
        assertThat(demo.out).contains("audience=[vault]").contains("audience=[https://kubernetes.default.svc]");
    }

    @Test
    void demo_namesTheExplainCommandForItsStatusSocket() {
        assertThat(demo.out).contains("agent/bin/satoken-agent explain --config " + dir.resolve("agent.yaml") + " "
                + dir.resolve("tokens/vault/token"));
    }

    @Test
    void demo_withStaleReader_reportsTokenNotReread() {
        // a 2 s token rotates by 1.6 s and is reported at 90 % of its lifetime, 1.8 s: within the 3 s run
        assertThat(demo.out).contains("stale reader: opened " + dir.resolve("tokens/vault/token") + " once",
                "TokenNotReread " + dir.resolve("tokens/vault/token"));
        assertThat(demo.out).doesNotContain("TokenNotReread " + dir.resolve("tokens/api/token"));
    }

    @Test
    void demo_usesKubeletsLayoutWithNarrowModes() throws Exception {
        Path tokens = dir.resolve("tokens");
        assertThat(Files.isSymbolicLink(tokens.resolve("..data"))).isTrue();
        assertThat(Files.readSymbolicLink(tokens.resolve("vault"))).isEqualTo(Path.of("..data/vault"));
        assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(tokens.resolve("vault/token"))))
                .isEqualTo("rw-------");
        assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(dir.resolve("jwks.json"))))
                .isEqualTo("rw-r--r--");
    }

    @Test
    void demo_neverPrintsAToken() throws Exception {
        String token = Files.readString(dir.resolve("tokens/vault/token"));
        assertThat(demo.out + demo.err).doesNotContain(token).doesNotContain(token.substring(token.lastIndexOf('.')));
    }

    @Test
    void verify_acceptsTheDemoTokenForItsAudience() {
        Result r = verify("vault", dir.resolve("tokens/vault/token"));
        assertThat(r.exit).as(r.err).isZero();
        assertThat(r.out).startsWith("OK subject=system:serviceaccount:demo:app");
    }

    @Test
    void verify_rejectsTheDemoTokenForAnotherAudience() {
        Result r = verify("https://kubernetes.default.svc", dir.resolve("tokens/vault/token"));
        assertThat(r.exit).isEqualTo(1);
        assertThat(r.err).contains("wrong audience");
    }

    @Test
    void verify_rejectsATamperedDemoToken() throws Exception {
        String token = Files.readString(dir.resolve("tokens/vault/token")).trim();
        String[] parts = token.split("\\.");
        // a real attack: the claims say another service account, the signature stays the original's
        String claims = new String(Base64.getUrlDecoder().decode(parts[1]), StandardCharsets.UTF_8);
        assertThat(claims).contains("system:serviceaccount:demo:app");
        parts[1] = Base64.getUrlEncoder().withoutPadding().encodeToString(
                claims.replace("demo:app", "demo:adm").getBytes(StandardCharsets.UTF_8));
        Path tampered = Files.writeString(dir.resolve("tampered"), String.join(".", parts));
        Result r = verify("vault", tampered);
        assertThat(r.exit).as(r.err).isEqualTo(1);
        assertThat(r.err).contains("bad signature");
    }

    @Test
    void demo_rejectsBadFlagsWithOneLine() {
        Result r = run("demo", "--ttl", "ten");
        assertThat(r.exit).isEqualTo(2);
        assertThat(r.err.strip().lines()).hasSize(1);
        assertThat(r.err).contains("invalid duration 'ten'");
        Result tooMany = run("demo", "--tokens", "0", "--dir", dir.resolve("unused").toString());
        assertThat(tooMany.exit).isEqualTo(2);
        assertThat(tooMany.err).contains("--tokens: must be between 1 and 100, got 0");
    }

    @Test
    void help_onEveryCommandExitsZero() {
        for (String[] args : new String[][] {{"--help"}, {"demo", "--help"}, {"verify", "--help"}}) {
            Result r = run(args);
            assertThat(r.exit).as(String.join(" ", args)).isZero();
            assertThat(r.out).contains("Usage: satoken-agent");
        }
    }

    @Test
    void noCommand_isAUsageErrorOnOneLine() {
        Result r = run();
        assertThat(r.exit).isEqualTo(2);
        assertThat(r.err.strip().lines()).hasSize(1);
        assertThat(r.err).contains("a command is required");
    }

    @Test
    void unknownFlag_isAUsageErrorOnOneLine() {
        Result r = run("demo", "--frobnicate");
        assertThat(r.exit).isEqualTo(2);
        assertThat(r.err.strip().lines()).hasSize(1);
        assertThat(r.err).contains("--frobnicate");
    }

    private static Result verify(String audience, Path token) {
        return run("verify", "--jwks", dir.resolve("jwks.json").toString(), "--audience", audience, token.toString());
    }

    private static Result run(String... args) {
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        int exit = AgentCommand.execute(new PrintWriter(out, true), new PrintWriter(err, true), args);
        return new Result(exit, out.toString(), err.toString());
    }

    private static long lines(String text, String word) {
        Pattern p = Pattern.compile("^\\S+ " + word + "\\b");
        return text.lines().filter(l -> p.matcher(l).find()).count();
    }
}
