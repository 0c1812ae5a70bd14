package io.satoken.e2e;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.nimbusds.jose.JWSVerifier;
import io.satoken.e2e.DemoTokens.Verdict;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * A SIGKILL at any point of a rotation leaves every token file whole: 200 times, {@code satoken-agent demo}
 * (5 one-second tokens in one directory, so a write is under way much of the time) is started on the same
 * directory, allowed its first write, then killed after a random 0–1.5 s. After each kill every token file
 * must read as a whole JWT with its audience, signed by the key of the killed run or of the one before
 * (each run writes a fresh key to {@code jwks.json}). After the next start's first write, whatever the kill
 * left behind (an unpublished timestamped dir, a {@code ..data_tmp}) must be gone, leaving exactly
 * {@code ..data}, one timestamped dir and the token links.
 */
class CrashConsistencyE2E {

    private static final String TEST = "crash-consistency";
    private static final int KILLS = 200;
    private static final int TOKENS = 5;
    private static final long MAX_KILL_DELAY_MS = 1_500;
    private static final String DATA_TMP = "..data_tmp";
    private static final String TARGET = " -> ";
    private static final Pattern TIMESTAMPED = Pattern.compile("\\.\\.\\d{4}(_\\d{2}){5}\\.\\d+");

    @Test
    void sigkillDuringRotations_leavesWholeVerifiableTokens_andNoStrayEntriesAfterTheNextWrite() throws Exception {
        Path dir = MemoryDirs.create("crash");
        try {
            run(dir);
        } finally {
            MemoryDirs.delete(dir);
        }
    }

    private void run(Path dir) throws Exception {
        Path tokens = dir.resolve("tokens");
        List<String> names = DemoTokens.names(TOKENS);
        Random random = new Random();
        long started = System.nanoTime();

        List<String> failures = new ArrayList<>();
        int badFilesAfterKill = 0;
        int killsLeavingLeftovers = 0;
        int leftoverEntries = 0;
        int leftoversSurvivingNextWrite = 0;
        int unexpectedShapes = 0;
        List<JWSVerifier> previousKey = List.of();
        Set<String> leftAtKill = Set.of();
        long killDelays = 0;

        for (int run = 0; run <= KILLS; run++) {
            SatokenProcess demo = SatokenProcess.agent("crash-demo",
                    List.of("demo", "--dir", dir.toString(), "--ttl", "1s", "--tokens", String.valueOf(TOKENS),
                            "--duration", "60s"),
                    null, Map.of());
            try {
                await().atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(10))
                        .until(() -> !demo.isAlive() || DemoTokens.count(demo, dir, " wrote ") >= TOKENS);
                assertThat(demo.isAlive()).as("demo run %d alive after its first write; log %s", run, demo.log())
                        .isTrue();

                // What the previous kill left must be gone once this run has written.
                if (run > 0) {
                    TreeSet<String> now = DemoTokens.entries(tokens);
                    for (String stray : leftAtKill) {
                        if (stillThere(tokens, now, stray)) {
                            leftoversSurvivingNextWrite++;
                            failures.add("run " + run + ": " + stray + " left by the kill survived the first write");
                        }
                    }
                    if (!cleanShapeWithin(tokens, names, Duration.ofMillis(200))) {
                        unexpectedShapes++;
                        failures.add("run " + run + ": after the first write the tokens dir holds "
                                + DemoTokens.entries(tokens));
                    }
                }
                if (run == KILLS) {
                    assertThat(demo.stop()).as("last demo's exit status after SIGTERM").isZero();
                    break;
                }

                long delay = (long) (random.nextDouble() * MAX_KILL_DELAY_MS);
                killDelays += delay;
                SatokenProcess.pause(Duration.ofMillis(delay));
                demo.kill();
            } finally {
                if (demo.isAlive()) {
                    demo.kill();
                }
            }

            List<JWSVerifier> currentKey = DemoTokens.verifiers(dir.resolve("jwks.json"));
            List<JWSVerifier> eitherKey = new ArrayList<>(previousKey);
            eitherKey.addAll(currentKey);
            for (String name : names) {
                Verdict v = DemoTokens.check(tokens.resolve(name).resolve("token"), DemoTokens.audienceFor(name),
                        eitherKey);
                if (v != Verdict.OK) {
                    badFilesAfterKill++;
                    failures.add("kill " + (run + 1) + ": " + name + "/token is " + v);
                }
            }
            leftAtKill = leftovers(tokens);
            if (!leftAtKill.isEmpty()) {
                killsLeavingLeftovers++;
                leftoverEntries += leftAtKill.size();
            }
            previousKey = currentKey;
        }

        double seconds = (System.nanoTime() - started) / 1e9;
        Figures.record(TEST, String.format("crash consistency: %d SIGKILLs (random 0-%d ms after the first write,"
                + " mean %d ms; %d one-second tokens in one directory): %d token files not whole and verifiable"
                + " after a kill (of %d checked); %d kills left %d stray entries (an unpublished timestamped dir or"
                + " ..data_tmp), %d of them survived the next start's first write; %d times the dir was not exactly"
                + " ..data + one version + the links; %.1f s",
                KILLS, MAX_KILL_DELAY_MS, killDelays / KILLS, TOKENS, badFilesAfterKill, KILLS * TOKENS,
                killsLeavingLeftovers, leftoverEntries, leftoversSurvivingNextWrite, unexpectedShapes, seconds));
        assertThat(failures).as("what the kills broke").isEmpty();
    }

    /** The timestamped dir ..data points to, or null. */
    private static String currentVersion(Path tokens) {
        try {
            return Files.readSymbolicLink(tokens.resolve("..data")).toString();
        } catch (NoSuchFileException e) {
            return null;
        } catch (IOException e) {
            throw new IllegalStateException(e);
        }
    }

    /**
     * Entries a writer would have to clean up: timestamped dirs {@code ..data} does not name, and a
     * {@code ..data_tmp}, given as {@code ..data_tmp -> target} since the next run makes its own.
     */
    private static Set<String> leftovers(Path tokens) {
        String current = currentVersion(tokens);
        Set<String> left = new TreeSet<>();
        for (String e : DemoTokens.entries(tokens)) {
            if (e.equals(DATA_TMP)) {
                left.add(DATA_TMP + TARGET + linkTarget(tokens.resolve(DATA_TMP)));
            } else if (TIMESTAMPED.matcher(e).matches() && !e.equals(current)) {
                left.add(e);
            }
        }
        return left;
    }

    /** Whether a leftover seen after the kill is still in the dir listing {@code now}. */
    private static boolean stillThere(Path tokens, Set<String> now, String leftover) {
        if (leftover.startsWith(DATA_TMP + TARGET)) {
            return now.contains(DATA_TMP)
                    && leftover.equals(DATA_TMP + TARGET + linkTarget(tokens.resolve(DATA_TMP)));
        }
        return now.contains(leftover) && !leftover.equals(currentVersion(tokens));
    }

    private static String linkTarget(Path link) {
        try {
            return Files.readSymbolicLink(link).toString();
        } catch (IOException e) {
            return "(gone)";
        }
    }

    /**
     * True when, at one of several looks within {@code within}, the dir is exactly {@code ..data}, the one
     * timestamped dir it names and the token links. The running demo may be mid-rotation at any one look (a
     * new version not yet published), so one clean look is enough; a leftover would spoil them all.
     */
    private static boolean cleanShapeWithin(Path tokens, List<String> names, Duration within) {
        long deadline = System.nanoTime() + within.toNanos();
        do {
            String current = currentVersion(tokens);
            TreeSet<String> expected = new TreeSet<>(names);
            expected.add("..data");
            if (current != null && TIMESTAMPED.matcher(current).matches()) {
                expected.add(current);
                if (DemoTokens.entries(tokens).equals(expected)) {
                    return true;
                }
            }
            SatokenProcess.pause(Duration.ofMillis(5));
        } while (System.nanoTime() < deadline);
        return false;
    }
}
