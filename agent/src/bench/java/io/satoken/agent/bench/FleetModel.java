package io.satoken.agent.bench;

import io.satoken.agent.projection.Projection;
import io.satoken.agent.projection.TokenDirectory;
import io.satoken.agent.refresh.Backoff;
import io.satoken.agent.refresh.RefreshListener;
import io.satoken.agent.token.RefreshPolicy;
import io.satoken.agent.refresh.RefreshScheduler;
import io.satoken.agent.token.BoundObjectRef;
import io.satoken.agent.token.CachedToken;
import io.satoken.agent.token.IssuedToken;
import io.satoken.agent.token.TokenCache;
import io.satoken.agent.token.TokenKey;
import io.satoken.agent.token.TokenSource;
import io.satoken.agent.token.TokenSourceException;
import io.satoken.common.logging.LogFormat;
import io.satoken.common.logging.LogLevel;
import io.satoken.common.logging.LogSetup;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.SplittableRandom;
import java.util.TreeMap;
import java.util.random.RandomGenerator;

/**
 * What a fleet of agents asks of the API server: the agent's own refresh code ({@link RefreshScheduler},
 * {@link TokenCache}, {@link RefreshPolicy} and its jitter, {@link Backoff}) run for every node of a fleet on one
 * simulated clock, with kubelet's rule (80 % and at most 10 s of jitter, TM-8, TM-C3) run the same way beside it.
 * Nothing is written to disk and no API server is called: the token source counts each TokenRequest in the second
 * it is sent, after the node's client-side QPS limit, and answers at once.
 *
 * <pre>
 *   mvn -B -q -pl agent -am -Pbench test-compile exec:exec -Dexec.executable=true \
 *     -Dbench.main=io.satoken.agent.bench.FleetModel -Dbench.jvmArgs="-Xmx12g" \
 *     -Dbench.args="--nodes 5000 --out target/fleet-model"
 * </pre>
 *
 * Options: {@code --nodes N} (5000), {@code --pods P} per node (110; every other pod has a second token),
 * {@code --hours H} simulated (48) or {@code --seconds S}, {@code --lifetime S} of each token in seconds (3600),
 * {@code --only NAME} one scenario, {@code --seeds K} (1) to also write {@code <scenario>-mean.csv}, the mean of K
 * runs with seeds 1..K (the model's expected histogram, which the real-API validation compares with), {@code
 * --issued FILE} to run only {@code satoken-replay}: the start measured by FleetValidation ({@code issued.csv}, each
 * token's first issue) in place of a simulated one, and the agent's refresh code from there ({@link #replayStart};
 * the fleet's size is the file's), {@code --out
 * DIR} for {@code <scenario>.csv} (TokenRequests in each second, seed 1), {@code summary.md} and {@code
 * requests.svg}. Each scenario: all pods created at once at hour 0, or in waves (a tenth of each node's pods every 5
 * minutes); in the "once" scenarios a 10-minute API outage at 24 h 42 min and a fleet-wide restart of every agent at
 * hour 36 (satoken adopts the tokens on disk; kubelet re-mints every token at its restart, TM-12), when the
 * simulated time reaches them.
 */
public final class FleetModel {

    private static final Instant START = Instant.parse("2026-01-01T00:00:00Z");
    /** Over one of kubelet's lock-step refresh waves (every 48 min of a 1 h token: the one due at 24 h 48 min). */
    private static final Duration OUTAGE_AT = Duration.ofHours(24).plusMinutes(42);
    private static final Duration OUTAGE = Duration.ofMinutes(10);
    private static final Duration RESTART_AT = Duration.ofHours(36);

    /** A refresh rule and the client-side limits of the program that follows it. */
    enum Rule {
        /** The agent: RefreshPolicy.spread(), its default --qps 20 --burst 40, backoff 1 s doubling to 1 min. */
        SATOKEN(RefreshPolicy.SPREAD_FRACTION, 20, 40, true),
        /** Kubelet: 80 % minus up to 10 s (TM-8, TM-C3), its default kubeAPIQPS 50 and burst 100; re-mints at restart. */
        KUBELET(0, 50, 100, false);

        final double spread;
        final double qps;
        final int burst;
        final boolean adoptsAtRestart;

        Rule(double spread, double qps, int burst, boolean adoptsAtRestart) {
            this.spread = spread;
            this.qps = qps;
            this.burst = burst;
            this.adoptsAtRestart = adoptsAtRestart;
        }
    }

    record Scenario(String name, Rule rule, boolean waves, boolean outageAndRestart) { }

    static final List<Scenario> SCENARIOS = List.of(
            new Scenario("satoken-once", Rule.SATOKEN, false, true),
            new Scenario("kubelet-once", Rule.KUBELET, false, true),
            new Scenario("satoken-waves", Rule.SATOKEN, true, false),
            new Scenario("kubelet-waves", Rule.KUBELET, true, false));

    /** The agents from a measured start: see {@link #replayStart}. */
    static final Scenario REPLAY = new Scenario("satoken-replay", Rule.SATOKEN, false, false);

    /** One token's first issue in a measured start: its node, its pod, its audience, and when, after time zero. */
    record IssuedAt(int node, int pod, String audience, long millis) { }

    /** {@code node,pod,audience,millis} lines, as FleetValidation's {@code issued.csv} writes them. */
    static List<IssuedAt> readIssued(Path csv) throws IOException {
        List<IssuedAt> start = new ArrayList<>();
        List<String> lines = Files.readAllLines(csv, StandardCharsets.UTF_8);
        for (String line : lines.subList(1, lines.size())) {
            String[] cells = line.split(",");
            start.add(new IssuedAt(Integer.parseInt(cells[0]), Integer.parseInt(cells[1]), cells[2],
                    Long.parseLong(cells[3])));
        }
        return start;
    }

    /**
     * The start as it was measured, not simulated: each token is counted as one TokenRequest at its measured
     * first issue, and at the last of its pod's issues the pod's tokens go into its node's cache as issued at those
     * instants ({@link TokenCache#adopt}, which draws each token's refresh time as an issue does) and the pod into
     * its node's scheduler. From there on the agent's own refresh code runs as in every scenario.
     */
    static void replayStart(List<IssuedAt> start, List<Node> nodes, Fleet fleet, Duration lifetime) {
        Map<List<Integer>, List<IssuedAt>> byPod = new TreeMap<>(
                Comparator.<List<Integer>>comparingInt(k -> k.get(0)).thenComparingInt(k -> k.get(1)));
        for (IssuedAt t : start) {
            byPod.computeIfAbsent(List.of(t.node(), t.pod()), k -> new ArrayList<>()).add(t);
            fleet.histogram.count(START.plusMillis(t.millis()), true);
        }
        byPod.forEach((k, tokens) -> {
            Node node = nodes.get(k.get(0));
            TokenDirectory dir = pod(k.get(0), k.get(1), lifetime);
            long last = tokens.stream().mapToLong(IssuedAt::millis).max().orElse(0);
            fleet.clock.schedule(START.plusMillis(Math.max(0, last)), () -> {
                for (IssuedAt t : tokens) {
                    Instant at = START.plusMillis(t.millis());
                    TokenKey key = dir.keys().stream().filter(x -> x.audiences().equals(List.of(t.audience())))
                            .findFirst().orElseThrow(() -> new IllegalArgumentException("no " + t.audience()
                                    + " token on pod " + t.pod() + " (every other pod has sts)"));
                    if (!node.cache.adopt(key, new IssuedToken("t", at, at.plus(lifetime)))) {
                        throw new IllegalStateException("token " + key + " issued at " + at + " not adopted");
                    }
                }
                node.addPod(dir);
            });
        });
    }

    /** One second's TokenRequests, sent and refused, over the whole run. */
    static final class Histogram {
        final int[] sent;
        final int[] failed;

        Histogram(int seconds) {
            sent = new int[seconds];
            failed = new int[seconds];
        }

        void count(Instant at, boolean ok) {
            int second = (int) Duration.between(START, at).getSeconds();
            if (second >= 0 && second < sent.length) {
                (ok ? sent : failed)[second]++;
            }
        }
    }

    /** The API server as the fleet sees it: each node's requests leave at its QPS limit, and are counted. */
    static final class Fleet {
        final SimClock clock;
        final Histogram histogram;
        final Duration lifetime;
        Instant outageFrom = Instant.MAX;
        Instant outageUntil = Instant.MAX;

        Fleet(SimClock clock, Histogram histogram, Duration lifetime) {
            this.clock = clock;
            this.histogram = histogram;
            this.lifetime = lifetime;
        }
    }

    /** One node's agent (or kubelet): its cache, its scheduler, its pods' directories, its client-side limit. */
    static final class Node implements TokenSource {
        final Fleet fleet;
        final Rule rule;
        final RandomGenerator random;
        final List<TokenDirectory> dirs = new ArrayList<>();
        TokenCache cache;
        RefreshScheduler scheduler;
        /** The token bucket's theoretical arrival time, in millis: a request leaves burst - 1 intervals before it at most. */
        long nextFree;

        Node(Fleet fleet, Rule rule, RandomGenerator random) {
            this.fleet = fleet;
            this.rule = rule;
            this.random = random;
            start(null);
        }

        /** Starts the node's program; after a restart, with the tokens it held when {@code adoptFrom} is given. */
        void start(TokenCache adoptFrom) {
            cache = new TokenCache(this, new RefreshPolicy(RefreshPolicy.DEFAULT_MAX_JITTER, rule.spread, random),
                    fleet.clock);
            scheduler = new RefreshScheduler(cache, fleet.clock,
                    new Backoff(Duration.ofSeconds(1), Duration.ofMinutes(1), random), fleet.clock,
                    new RefreshListener() { }, dir -> payload -> true);
            for (TokenDirectory dir : dirs) {
                if (adoptFrom != null) {
                    for (TokenKey key : dir.keys()) {
                        adoptFrom.peek(key).map(CachedToken::token).ifPresent(t -> cache.adopt(key, t));
                    }
                }
                scheduler.put(dir);
            }
        }

        void restart() {
            TokenCache old = cache;
            scheduler.close();
            start(rule.adoptsAtRestart ? old : null);
        }

        void addPod(TokenDirectory dir) {
            dirs.add(dir);
            scheduler.put(dir);
        }

        /** Sent when the node's token bucket allows: the request's second, and the token's issue time. */
        @Override
        public IssuedToken issue(TokenKey key) throws TokenSourceException {
            long now = fleet.clock.millis();
            long interval = (long) (1000 / rule.qps);
            // a token bucket as a theoretical arrival time: up to burst requests at once, then one per interval
            long sendAt = Math.max(now, nextFree - (rule.burst - 1) * interval);
            nextFree = Math.max(nextFree, now) + interval;
            Instant sent = Instant.ofEpochMilli(sendAt);
            if (!sent.isBefore(fleet.outageFrom) && sent.isBefore(fleet.outageUntil)) {
                fleet.histogram.count(sent, false);
                throw new TokenSourceException("connection refused (simulated outage)");
            }
            fleet.histogram.count(sent, true);
            return new IssuedToken("t", sent, sent.plus(fleet.lifetime));
        }
    }

    /** The figures of one scenario. */
    record Result(Scenario scenario, long requests, long refused, double meanPerSecond, int secondCyclePeak,
            double secondCycleMean, int afterOutagePeak, long afterRestart10Min, Duration elapsed) {

        double stormFactor() {
            return secondCycleMean == 0 ? 0 : secondCyclePeak / secondCycleMean;
        }
    }

    /** A pod's volume: a token for vault and, for every other pod, one for sts, both bound to the pod. */
    private static TokenDirectory pod(int node, int pod, Duration lifetime) {
        String name = "pod-" + node + "-" + pod;
        BoundObjectRef ref = BoundObjectRef.pod(name, "uid-" + node + "-" + pod);
        List<Projection> files = new ArrayList<>(2);
        files.add(new Projection(new TokenKey("ns", "app", List.of("vault"), lifetime.getSeconds(), ref), "vault",
                0600, null, null));
        if (pod % 2 == 1) {
            files.add(new Projection(new TokenKey("ns", "app", List.of("sts"), lifetime.getSeconds(), ref), "sts",
                    0600, null, null));
        }
        return new TokenDirectory("csi:" + name, Path.of("/sim", name), files);
    }

    static Result summarize(Scenario scenario, Histogram h, Duration lifetime, Duration elapsed) {
        long requests = 0;
        long refused = 0;
        for (int s = 0; s < h.sent.length; s++) {
            requests += h.sent[s];
            refused += h.failed[s];
        }
        long lifetimeS = lifetime.getSeconds();
        // Steady state: from the end of the first lifetime to the outage (or the end), away from the start.
        int steadyFrom = (int) lifetimeS;
        int steadyTo = scenario.outageAndRestart() ? Math.min((int) OUTAGE_AT.getSeconds(), h.sent.length)
                : h.sent.length;
        double steady = mean(h.sent, steadyFrom, steadyTo);
        // The second refresh cycle after the start: refreshes at 80 % of the lifetime, so the second falls around
        // 1.6 lifetimes; the window runs from 1.2 to 2.0 lifetimes (less the waves' 45 minutes, which it holds).
        int from = (int) (lifetimeS * 12 / 10);
        int to = Math.min((int) (lifetimeS * 2), h.sent.length);
        int peak = max(h.sent, from, to);
        double cycleMean = mean(h.sent, from, to);
        int afterOutage = 0;
        long afterRestart = 0;
        if (scenario.outageAndRestart() && reachesRestart(h.sent.length)) {
            int outageEnd = (int) OUTAGE_AT.plus(OUTAGE).getSeconds();
            afterOutage = max(h.sent, outageEnd, outageEnd + 600);
            int restart = (int) RESTART_AT.getSeconds();
            for (int s = restart; s < restart + 600 && s < h.sent.length; s++) {
                afterRestart += h.sent[s];
            }
        }
        return new Result(scenario, requests, refused, steady, peak, cycleMean, afterOutage, afterRestart, elapsed);
    }

    /** Whether a run of {@code seconds} reaches the outage and the restart (a short run has neither). */
    static boolean reachesRestart(long seconds) {
        return seconds > RESTART_AT.getSeconds();
    }

    private static double mean(int[] counts, int from, int to) {
        long sum = 0;
        for (int s = from; s < to; s++) {
            sum += counts[s];
        }
        return to > from ? (double) sum / (to - from) : 0;
    }

    private static int max(int[] counts, int from, int to) {
        int max = 0;
        for (int s = from; s < to && s < counts.length; s++) {
            max = Math.max(max, counts[s]);
        }
        return max;
    }

    public static void main(String[] args) throws IOException {
        // every failed attempt during the outage is a WARN line of the scheduler's: millions of them
        LogSetup.apply(LogLevel.ERROR, LogFormat.TEXT);
        int nodes = 5000;
        int pods = 110;
        Duration hours = Duration.ofHours(48);
        int seeds = 1;
        Duration lifetime = Duration.ofSeconds(3600);
        Optional<String> only = Optional.empty();
        Path out = Path.of("target/fleet-model");
        Optional<Path> issued = Optional.empty();
        for (int i = 0; i < args.length; i += 2) {
            String value = i + 1 < args.length ? args[i + 1] : "";
            switch (args[i]) {
                case "--nodes" -> nodes = Integer.parseInt(value);
                case "--pods" -> pods = Integer.parseInt(value);
                case "--hours" -> hours = Duration.ofHours(Long.parseLong(value));
                case "--seconds" -> hours = Duration.ofSeconds(Long.parseLong(value));
                case "--seeds" -> seeds = Integer.parseInt(value);
                case "--lifetime" -> lifetime = Duration.ofSeconds(Long.parseLong(value));
                case "--only" -> only = Optional.of(value);
                case "--out" -> out = Path.of(value);
                case "--issued" -> issued = Optional.of(Path.of(value));
                default -> throw new IllegalArgumentException(args[i] + ": unknown option; the options are --nodes,"
                        + " --pods, --hours, --seconds, --lifetime, --only, --seeds, --issued, --out");
            }
        }
        Files.createDirectories(out);
        List<Result> results = new ArrayList<>();
        List<Histogram> histograms = new ArrayList<>();
        List<IssuedAt> start = issued.isPresent() ? readIssued(issued.get()) : List.of();
        if (!start.isEmpty()) {
            nodes = start.stream().mapToInt(IssuedAt::node).max().orElse(0) + 1;
            pods = start.stream().mapToInt(IssuedAt::pod).max().orElse(0) + 1;
        }
        for (Scenario scenario : issued.isPresent() ? List.of(REPLAY) : SCENARIOS) {
            if (only.isPresent() && !only.get().equals(scenario.name())) {
                continue;
            }
            SimClockRun run = runKeepingHistogram(scenario, nodes, pods, hours, lifetime, start);
            results.add(run.result());
            histograms.add(run.histogram());
            writeCsv(out.resolve(scenario.name() + ".csv"), run.histogram());
            System.out.println(line(run.result()));
            if (seeds > 1) {
                double[] sum = new double[run.histogram().sent.length];
                for (int seed = 1; seed <= seeds; seed++) {
                    Histogram[] kept = new Histogram[1];
                    if (seed == 1) {
                        kept[0] = run.histogram();
                    } else {
                        runWith(scenario, nodes, pods, hours, lifetime, seed, kept, start);
                    }
                    for (int s = 0; s < sum.length; s++) {
                        sum[s] += kept[0].sent[s];
                    }
                }
                writeMeanCsv(out.resolve(scenario.name() + "-mean.csv"), sum, seeds);
            }
        }
        String summary = summary(results, nodes, pods, hours, lifetime);
        Files.writeString(out.resolve("summary.md"), summary, StandardCharsets.UTF_8);
        Files.writeString(out.resolve("requests.svg"), FleetPlot.svg(results, histograms, nodes, pods),
                StandardCharsets.UTF_8);
        System.out.print(summary);
    }

    record SimClockRun(Result result, Histogram histogram) { }

    /** {@link #run}, keeping the histogram for the CSV and the plot. */
    static SimClockRun runKeepingHistogram(Scenario scenario, int nodes, int pods, Duration hours, Duration lifetime,
            List<IssuedAt> start) {
        Histogram[] kept = new Histogram[1];
        Result result = runWith(scenario, nodes, pods, hours, lifetime, 1, kept, start);
        return new SimClockRun(result, kept[0]);
    }

    private static Result runWith(Scenario scenario, int nodes, int pods, Duration hours, Duration lifetime, long seed,
            Histogram[] kept, List<IssuedAt> start) {
        long started = System.nanoTime();
        SimClock clock = new SimClock(START);
        Histogram histogram = new Histogram((int) hours.getSeconds());
        kept[0] = histogram;
        Fleet fleet = new Fleet(clock, histogram, lifetime);
        boolean outageAndRestart = scenario.outageAndRestart() && reachesRestart(hours.getSeconds());
        if (outageAndRestart) {
            fleet.outageFrom = START.plus(OUTAGE_AT);
            fleet.outageUntil = fleet.outageFrom.plus(OUTAGE);
        }
        SplittableRandom seeds = new SplittableRandom(seed);
        List<Node> fleetNodes = new ArrayList<>(nodes);
        for (int n = 0; n < nodes; n++) {
            fleetNodes.add(new Node(fleet, scenario.rule(), seeds.split()));
        }
        if (!start.isEmpty()) {
            replayStart(start, fleetNodes, fleet, lifetime);
        }
        int waves = start.isEmpty() ? scenario.waves() ? 10 : 1 : 0;
        for (int wave = 0; wave < waves; wave++) {
            clock.runUntil(START.plus(Duration.ofMinutes(5L * wave)));
            for (int n = 0; n < nodes; n++) {
                Node node = fleetNodes.get(n);
                for (int p = wave; p < pods; p += waves) {
                    node.addPod(pod(n, p, lifetime));
                }
            }
        }
        if (outageAndRestart) {
            clock.runUntil(START.plus(RESTART_AT));
            fleetNodes.forEach(Node::restart);
        }
        clock.runUntil(START.plus(hours));
        return summarize(scenario, histogram, lifetime, Duration.ofNanos(System.nanoTime() - started));
    }

    private static void writeCsv(Path file, Histogram h) throws IOException {
        StringBuilder csv = new StringBuilder("second,sent,refused\n");
        for (int s = 0; s < h.sent.length; s++) {
            if (h.sent[s] != 0 || h.failed[s] != 0) {
                csv.append(s).append(',').append(h.sent[s]).append(',').append(h.failed[s]).append('\n');
            }
        }
        Files.writeString(file, csv, StandardCharsets.UTF_8);
    }

    /** {@code second,mean_sent}: the mean over {@code seeds} runs of the TokenRequests sent in each second. */
    private static void writeMeanCsv(Path file, double[] sum, int seeds) throws IOException {
        StringBuilder csv = new StringBuilder("second,mean_sent\n");
        for (int s = 0; s < sum.length; s++) {
            if (sum[s] != 0) {
                csv.append(s).append(',').append(String.format(Locale.ROOT, "%.4f", sum[s] / seeds)).append('\n');
            }
        }
        Files.writeString(file, csv, StandardCharsets.UTF_8);
    }

    private static String line(Result r) {
        return String.format(Locale.ROOT, "%s: %,d requests, %,d refused, storm factor %.1f, %s", r.scenario().name(),
                r.requests(), r.refused(), r.stormFactor(), r.elapsed());
    }

    static String summary(List<Result> results, int nodes, int pods, Duration hours, Duration lifetime) {
        StringBuilder md = new StringBuilder();
        String simulated = hours.toSecondsPart() == 0 && hours.toMinutesPart() == 0
                ? hours.toHours() + " simulated hours" : hours.getSeconds() + " simulated seconds";
        md.append(String.format(Locale.ROOT, "%,d nodes x %d pods (1.5 tokens each), tokens of %d s, %s%n%n",
                nodes, pods, lifetime.getSeconds(), simulated));
        md.append("| scenario | TokenRequests | steady mean (/s) | 2nd cycle peak (/s) | 2nd cycle mean (/s) | storm factor"
                + " | peak in the 10 min after the outage (/s) | requests in the 10 min after the restart (steady: mean x 600)"
                + " | run time |\n");
        md.append("|---|---|---|---|---|---|---|---|---|\n");
        for (Result r : results) {
            boolean outage = r.scenario().outageAndRestart() && reachesRestart(hours.getSeconds());
            md.append(String.format(Locale.ROOT, "| %s | %,d | %,.1f | %,d | %,.1f | %.1f | %s | %s | %d s |%n",
                    r.scenario().name(), r.requests(), r.meanPerSecond(), r.secondCyclePeak(), r.secondCycleMean(),
                    r.stormFactor(), outage ? String.format(Locale.ROOT, "%,d", r.afterOutagePeak()) : "-",
                    outage ? String.format(Locale.ROOT, "%,d (%,.0f)", r.afterRestart10Min(),
                            r.meanPerSecond() * 600) : "-",
                    r.elapsed().toSeconds()));
        }
        return md.toString();
    }

    private FleetModel() {
    }
}
