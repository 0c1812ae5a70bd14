package io.satoken.agent.cli;

import io.satoken.agent.projection.Projection;
import io.satoken.agent.projection.TokenDirectory;
import io.satoken.agent.refresh.ExecutorTaskScheduler;
import io.satoken.agent.token.BoundObjectRef;
import io.satoken.agent.token.LocalIssuer;
import io.satoken.agent.token.TokenKey;
import io.satoken.common.cli.DurationConverter;
import io.satoken.common.text.DurationText;
import io.satoken.common.cli.LogOptions;
import java.io.IOException;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.time.InstantSource;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * {@code satoken-agent demo}: the whole token pipeline without a cluster. A {@link LocalIssuer} signs
 * tokens for a few example audiences; the cache, the refresh scheduler and the atomic writer write and
 * rotate them under {@code DIR/tokens}, and the issuer's public keys go to {@code DIR/jwks.json} so
 * {@code satoken-agent verify} can check them. It serves the agent's status endpoint on {@code
 * DIR/agent-status.sock}, named by {@code DIR/agent.yaml}, so {@code satoken-agent explain} can ask it while it runs;
 * {@code --stale-reader} adds a reader that never re-reads, which the demo then reports as the agent would.
 */
@Command(name = "demo", mixinStandardHelpOptions = true,
        description = {"Runs the token pipeline with a local issuer (no cluster needed).",
                "Tokens are written under DIR/tokens/<name>/token and rotated at 80%% of their TTL;",
                "the issuer's public keys are in DIR/jwks.json.",
                "While it runs, explain --config DIR/agent.yaml asks it (status socket DIR/agent-status.sock)."},
        footerHeading = "%nExamples:%n",
        footer = {
            "  satoken-agent demo",
            "  # Ten tokens of two minutes, written under /tmp/demo, for five minutes",
            "  satoken-agent demo --dir /tmp/demo --ttl 2m --duration 5m --tokens 10",
            "  # A reader that never re-reads its token, and what explain says of it",
            "  satoken-agent demo --dir /tmp/demo --stale-reader",
            "  satoken-agent explain --config /tmp/demo/agent.yaml \\",
            "      /tmp/demo/tokens/vault/token",
            "  # Then check one against the issuer's keys",
            "  satoken-agent verify --jwks satoken-demo/jwks.json \\",
            "      --audience vault satoken-demo/tokens/vault/token"})
final class DemoCommand implements Callable<Integer> {

    /** Example consumers: the directory name and the audience a token for it carries. */
    private static final List<String[]> EXAMPLES = List.of(
            new String[] {"vault", "vault"},
            new String[] {"api", "https://kubernetes.default.svc"},
            new String[] {"sts", "sts.amazonaws.com"},
            new String[] {"db", "postgres"},
            new String[] {"queue", "nats"});
    static final String ISSUER = "https://satoken.demo.invalid";
    /** Under DIR: the status endpoint's socket, and the config that names it for explain. */
    static final String STATUS_SOCKET = "agent-status.sock";
    static final String EXPLAIN_CONFIG = "agent.yaml";

    @CommandLine.Spec
    CommandLine.Model.CommandSpec spec;

    @CommandLine.Mixin
    LogOptions logs;

    @Option(names = "--dir", defaultValue = "satoken-demo", paramLabel = "DIR",
            description = "Where to write (default: ${DEFAULT-VALUE}).")
    Path dir;

    @Option(names = "--ttl", defaultValue = "30s", converter = DurationConverter.class,
            description = "Token lifetime, e.g. 30s, 10m (default: ${DEFAULT-VALUE}). Below Kubernetes' "
                    + "600 s minimum only here, so rotations show up quickly.")
    Duration ttl;

    @Option(names = "--duration", defaultValue = "60s", converter = DurationConverter.class,
            description = "How long to run before exiting 0 (default: ${DEFAULT-VALUE}). Ctrl-C stops early.")
    Duration duration;

    @Option(names = "--tokens", defaultValue = "3", paramLabel = "N",
            description = "How many example tokens, 1..100 (default: ${DEFAULT-VALUE}).")
    int tokens;

    @Option(names = "--stale-reader",
            description = "Also run a reader that opens the first token once and never again: after that token's "
                    + "rotation the demo reports it TokenNotReread, as the agent does, and explain shows it.")
    boolean staleReader;

    @Override
    public Integer call() throws Exception {
        logs.apply();
        validate();
        PrintWriter out = spec.commandLine().getOut();
        InstantSource clock = InstantSource.system();
        // absolute, as the status endpoint names directories and explain matches the path it is given
        dir = dir.toAbsolutePath().normalize();
        Path tokenDir = directory(dir.resolve("tokens"));
        LocalIssuer issuer = LocalIssuer.generate(ISSUER, clock);
        writeJwks(issuer);
        Path socket = dir.resolve(STATUS_SOCKET);
        Path explainConfig = writeExplainConfig(dir, socket);

        List<Projection> projections = projections();
        CountDownLatch stop = new CountDownLatch(1);
        CountDownLatch stopped = new CountDownLatch(1);
        Thread onCtrlC = new Thread(() -> {
            stop.countDown();
            if (awaitQuietly(stopped)) {
                // Ctrl-C is how a demo ends: once shut down cleanly, say so with 0 rather than the JVM's 130.
                Runtime.getRuntime().halt(0);
            }
        }, "satoken-demo-shutdown");
        Runtime.getRuntime().addShutdownHook(onCtrlC);

        out.printf("%s: %d token(s), ttl %s, for %s; writing under %s (kid %s)%n", spec.qualifiedName(),
                projections.size(), DurationText.of(ttl), DurationText.of(duration), tokenDir, issuer.keyId());
        out.flush();
        try {
            try (ExecutorTaskScheduler timers = new ExecutorTaskScheduler(clock, 2);
                    DemoRun run = new DemoRun(issuer, clock, timers, new TokenDirectory("demo", tokenDir, projections),
                            socket, staleReader, out)) {
                run.start();
                if (run.serving()) {
                    synchronized (out) {
                        out.printf("%s: while it runs, ask it what it keeps for a file, from another shell:%n"
                                + "  %s%n", spec.qualifiedName(), explainCommand(explainConfig, run.firstFile()));
                        out.flush();
                    }
                }
                stop.await(duration.toMillis(), TimeUnit.MILLISECONDS);
                synchronized (out) {
                    out.printf("%s: done, %d write(s), %d rotation(s)%s. Check a token with:%n"
                            + "  agent/bin/satoken-agent verify --jwks %s --audience %s %s%n",
                            spec.qualifiedName(), run.writes(), run.rotations(),
                            staleReader ? ", " + run.notReread() + " TokenNotReread" : "", dir.resolve("jwks.json"),
                            EXAMPLES.get(0)[1], run.firstFile());
                    out.flush();
                }
            }
        } finally {
            stopped.countDown(); // after the summary: on Ctrl-C the hook ends the JVM as soon as this opens
            try {
                Runtime.getRuntime().removeShutdownHook(onCtrlC);
            } catch (IllegalStateException shuttingDown) {
                // Ctrl-C: the hook is running
            }
        }
        return 0;
    }

    /** The command that asks the demo's status endpoint about {@code file}. */
    static String explainCommand(Path config, Path file) {
        return "agent/bin/satoken-agent explain --config " + config + " " + file;
    }

    /**
     * The config {@code explain --config} reads to find the demo's status socket, written whole to {@code
     * DIR/agent.yaml}. explain reads only its {@code statusSocket}; {@code mode} is there because a config must
     * have one.
     */
    static Path writeExplainConfig(Path dir, Path socket) throws IOException {
        String yaml = "# Written by satoken-agent demo, only so that explain finds the demo's status socket:\n"
                + "#   satoken-agent explain --config " + dir.resolve(EXPLAIN_CONFIG) + " FILE\n"
                + "# Not a config to run an agent with.\n"
                + "mode: csi\n"
                + "statusSocket: " + socket + "\n";
        Path tmp = Files.createTempFile(dir, ".agent", ".tmp");
        Files.writeString(tmp, yaml);
        Files.setPosixFilePermissions(tmp, PosixFilePermissions.fromString("rw-r--r--"));
        return Files.move(tmp, dir.resolve(EXPLAIN_CONFIG), StandardCopyOption.ATOMIC_MOVE,
                StandardCopyOption.REPLACE_EXISTING);
    }

    private void validate() {
        if (ttl.compareTo(Duration.ofSeconds(1)) < 0) {
            throw new CommandLine.ParameterException(spec.commandLine(), "--ttl: must be at least 1s, got " + DurationText.of(ttl));
        }
        if (duration.isZero() || duration.isNegative()) {
            throw new CommandLine.ParameterException(spec.commandLine(), "--duration: must be positive, got " + DurationText.of(duration));
        }
        if (tokens < 1 || tokens > 100) {
            throw new CommandLine.ParameterException(spec.commandLine(), "--tokens: must be between 1 and 100, got " + tokens);
        }
    }

    private List<Projection> projections() {
        long seconds = (ttl.toMillis() + 999) / 1000;
        BoundObjectRef pod = BoundObjectRef.pod("demo", UUID.nameUUIDFromBytes("satoken-demo".getBytes(StandardCharsets.UTF_8)).toString());
        List<Projection> projections = new ArrayList<>();
        for (int i = 0; i < tokens; i++) {
            String[] example = EXAMPLES.get(i % EXAMPLES.size());
            String suffix = i < EXAMPLES.size() ? "" : "-" + i;
            TokenKey key = new TokenKey("demo", "app", List.of(example[1] + suffix), seconds, pod);
            projections.add(new Projection(key, example[0] + suffix + "/token", 0600, null, null));
        }
        return projections;
    }

    /** The JWKS is public: written whole (temp file + rename) so a reader never sees half of it. */
    private void writeJwks(LocalIssuer issuer) throws IOException {
        Path tmp = Files.createTempFile(dir, ".jwks", ".tmp");
        Files.writeString(tmp, issuer.publicJwksJson() + "\n");
        Files.setPosixFilePermissions(tmp, PosixFilePermissions.fromString("rw-r--r--"));
        Files.move(tmp, dir.resolve("jwks.json"), StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
    }

    private Path directory(Path tokenDir) throws IOException {
        Files.createDirectories(tokenDir);
        Files.setPosixFilePermissions(tokenDir, PosixFilePermissions.fromString("rwxr-xr-x"));
        return tokenDir;
    }

    /** True when the latch opened within 10 s. */
    private static boolean awaitQuietly(CountDownLatch latch) {
        try {
            return latch.await(10, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        }
    }
}
