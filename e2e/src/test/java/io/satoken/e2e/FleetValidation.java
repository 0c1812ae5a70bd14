package io.satoken.e2e;

import io.satoken.agent.testing.KubeletCsiClient;
import com.google.gson.JsonObject;
import com.google.gson.JsonParser;
import io.kubernetes.client.openapi.apis.CoreV1Api;
import io.kubernetes.client.openapi.models.V1Node;
import io.kubernetes.client.openapi.models.V1ObjectMeta;
import io.kubernetes.client.openapi.models.V1Pod;
import io.satoken.common.testing.KubeApiServer;
import java.awt.BasicStroke;
import java.awt.Color;
import java.awt.Font;
import java.awt.Graphics2D;
import java.awt.RenderingHints;
import java.awt.image.BufferedImage;
import java.io.BufferedReader;
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
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import java.util.stream.Stream;
import javax.imageio.ImageIO;

/**
 * The fleet model's check against a real API server: a load driver (run by hand, not a test; BENCHMARKS.md, "Fleet
 * model") that starts one kube-apiserver with etcd, {@code --nodes} Node objects, {@code --pods} pods on each (API
 * objects with {@code spec.nodeName}; no kubelet runs) whose one CSI volume asks for a token of {@code --lifetime}
 * seconds (audience {@code vault}) and, on every other pod, a second one ({@code sts}), as FleetModel's pods do; one
 * agent process per node from its launcher, each with its own kubelet dir, CSI socket and metrics port, all acting
 * as the agent's ServiceAccount; and, as each node's kubelet ({@link KubeletCsiClient}), publishes every pod's volume
 * at once. Then it waits {@code --seconds} from that instant and counts the TokenRequests the API server received in
 * each second, from its audit log (a policy that logs only {@code serviceaccounts/token} creates, at Metadata level:
 * who, when, the answer's code, never a token), cross-checked with kube-apiserver's {@code apiserver_request_total}
 * and the agents' {@code satoken_token_requests_total}.
 *
 * <p>Writes {@code measured.csv} (the TokenRequests in each second) and {@code issued.csv} (each token's first issue,
 * {@link #writeIssued}), the input of FleetModel's {@code --issued}. {@code --model FILE} (FleetModel's {@code
 * satoken-once-mean.csv} for the same fleet, and {@code --model-run FILE} its seed-1 {@code satoken-once.csv})
 * compares the measurement with the model's own start, every TokenRequest answered at once; {@code --replay FILE}
 * and {@code --replay-run FILE} (FleetModel's {@code satoken-replay-mean.csv} and {@code satoken-replay.csv}, run on
 * this run's {@code issued.csv}) with the model's refreshes from the measured start. {@link #compare} says how.
 * {@code --measured FILE} compares an earlier run's {@code measured.csv} without running anything. Writes {@code
 * comparison.md} and {@code fleet-validation.png} to {@code --out}.
 *
 * <pre>
 *   mvn -B -ntp -pl e2e -am -Pfleet-validation -DskipTests package exec:exec -Dexec.executable=true \
 *     -Dfleet.args="--nodes 10 --pods 50 --lifetime 600 --seconds 1260 --model ... --out target/fleet-validation"
 * </pre>
 */
public final class FleetValidation {

    /** The agent's JVM: small, as ten of them share the machine with the API server. */
    private static final String AGENT_JAVA_OPTS = "-XX:+UseSerialGC -XX:TieredStopAtLevel=1 -Xmx96m";
    private static final String AGENT_USER = "system:serviceaccount:" + AgentIdentity.NAMESPACE + ":"
            + AgentIdentity.SERVICE_ACCOUNT;
    /** Only the TokenRequests, at Metadata level: no request or response body, so no token, is logged. */
    private static final String AUDIT_POLICY = """
            apiVersion: audit.k8s.io/v1
            kind: Policy
            omitStages: ["RequestReceived"]
            rules:
            - level: Metadata
              verbs: ["create"]
              resources:
              - group: ""
                resources: ["serviceaccounts/token"]
            - level: None
            """;

    private FleetValidation() {
    }

    public static void main(String[] args) throws Exception {
        int nodes = 10;
        int pods = 50;
        long lifetime = 600;
        int seconds = 1260;
        Path model = null;
        Path modelRun = null;
        Path replay = null;
        Path replayRun = null;
        Path measured = null;
        Path out = Path.of("target/fleet-validation");
        for (int i = 0; i < args.length; i += 2) {
            String value = i + 1 < args.length ? args[i + 1] : "";
            switch (args[i]) {
                case "--nodes" -> nodes = Integer.parseInt(value);
                case "--pods" -> pods = Integer.parseInt(value);
                case "--lifetime" -> lifetime = Long.parseLong(value);
                case "--seconds" -> seconds = Integer.parseInt(value);
                case "--model" -> model = Path.of(value);
                case "--model-run" -> modelRun = Path.of(value);
                case "--replay" -> replay = Path.of(value);
                case "--replay-run" -> replayRun = Path.of(value);
                case "--measured" -> measured = Path.of(value);
                case "--out" -> out = Path.of(value);
                default -> throw new IllegalArgumentException(args[i] + ": unknown option; the options are --nodes,"
                        + " --pods, --lifetime, --seconds, --model, --model-run, --replay, --replay-run, --measured, --out");
            }
        }
        if (lifetime < 600) {
            throw new IllegalArgumentException("--lifetime: the API server's minimum is 600 s, got " + lifetime);
        }
        Files.createDirectories(out);
        String header;
        if (measured == null) {
            measured = out.resolve("measured.csv");
            header = run(nodes, pods, lifetime, seconds, measured, out.resolve("issued.csv"));
            Files.writeString(out.resolve("run.txt"), header, StandardCharsets.UTF_8);
        } else {
            Path runFile = measured.resolveSibling("run.txt");
            header = Files.exists(runFile) ? Files.readString(runFile) : "";
        }
        List<Model> models = new ArrayList<>();
        if (model != null) {
            models.add(new Model("model, instant start", readCsv(model, seconds),
                    modelRun == null ? null : readCsv(modelRun, seconds)));
        }
        if (replay != null) {
            models.add(new Model("model, measured start", readCsv(replay, seconds),
                    replayRun == null ? null : readCsv(replayRun, seconds)));
        }
        if (!models.isEmpty()) {
            double[] m = readCsv(measured, seconds);
            String md = header + "\n" + compare(m, models, lifetime);
            Files.writeString(out.resolve("comparison.md"), md, StandardCharsets.UTF_8);
            plot(out.resolve("fleet-validation.png"), m, models, nodes, pods, lifetime);
            System.out.print(md);
        }
        System.exit(0); // the gRPC clients' and the API client's threads
    }

    /** Runs the fleet and writes the TokenRequests the API server received in each second; returns the run's facts. */
    private static String run(int nodes, int pods, long lifetime, int seconds, Path measuredCsv, Path issuedCsv)
            throws Exception {
        Path work = Files.createTempDirectory(Path.of("/tmp"), "sfv-");
        Path auditLog = work.resolve("audit.log");
        Path policy = Files.writeString(work.resolve("audit-policy.yaml"), AUDIT_POLICY);
        KubeApiServer server = KubeApiServer.builder()
                .flag("--audit-policy-file", policy.toString())
                .flag("--audit-log-path", auditLog.toString())
                .flag("--audit-log-format", "json")
                .build().start();
        List<SatokenProcess> agents = new ArrayList<>();
        List<KubeletCsiClient> kubelets = new ArrayList<>();
        StringBuilder facts = new StringBuilder();
        try {
            CoreV1Api admin = new CoreV1Api(server.adminClient());
            String namespace = server.createNamespace("fleet");
            server.createServiceAccount(namespace, "app");
            Path kubeconfig = AgentIdentity.kubeconfig(server, work.resolve("agent.kubeconfig"));

            // the nodes, their pods, and one agent per node with the kubelet's side of its sockets
            List<List<V1Pod>> podsByNode = new ArrayList<>();
            ExecutorService pool = Executors.newFixedThreadPool(4);
            Instant setupStarted = Instant.now();
            try {
                List<Future<SatokenProcess>> started = new ArrayList<>();
                for (int n = 0; n < nodes; n++) {
                    String node = String.format(Locale.ROOT, "node-%02d", n);
                    admin.createNode(new V1Node().metadata(new V1ObjectMeta().name(node))).execute();
                    Path dir = Files.createDirectories(work.resolve("n" + n));
                    Path kubeletDir = Files.createDirectories(dir.resolve("kubelet"));
                    Path config = Files.writeString(dir.resolve("agent.yaml"),
                            "mode: csi\nkubeletDir: " + kubeletDir + "\n");
                    CsiAgentSetup setup = new CsiAgentSetup(kubeconfig, config, kubeletDir, node);
                    KubeletCsiClient kubelet = KubeletCsiClient.open(kubeletDir);
                    kubelets.add(kubelet);
                    NodePods nodePods = new NodePods(server.adminClient(), namespace, node, "app");
                    List<Future<V1Pod>> created = new ArrayList<>();
                    for (int p = 0; p < pods; p++) {
                        String name = String.format(Locale.ROOT, "pod-%02d-%03d", n, p);
                        Map<String, String> attributes = attributes(p, lifetime);
                        created.add(pool.submit(() -> nodePods.create(name, attributes)));
                    }
                    List<V1Pod> nodePodList = new ArrayList<>();
                    for (Future<V1Pod> f : created) {
                        nodePodList.add(f.get());
                    }
                    podsByNode.add(nodePodList);
                    String address = "127.0.0.1:" + E2E.freePort();
                    started.add(pool.submit(() -> {
                        SatokenProcess agent = SatokenProcess.agent("fleet-agent-" + node, setup.args(address),
                                address, Map.of("JAVA_OPTS", AGENT_JAVA_OPTS));
                        kubelet.register(agent, Duration.ofMinutes(3));
                        return agent.awaitReady(Duration.ofMinutes(3));
                    }));
                }
                for (Future<SatokenProcess> f : started) {
                    agents.add(f.get());
                }
            } finally {
                pool.shutdownNow();
            }
            System.out.printf(Locale.ROOT, "fleet: %d nodes, %d pods each, %d agents ready after %d s%n", nodes, pods,
                    agents.size(), Duration.between(setupStarted, Instant.now()).toSeconds());

            // time zero: every pod's volume published at once, as FleetModel's "once" start
            Instant zero = Instant.now();
            Instant giveUp = zero.plus(Duration.ofMinutes(5));
            List<CompletableFuture<Path>> published = new ArrayList<>();
            for (int n = 0; n < nodes; n++) {
                for (V1Pod pod : podsByNode.get(n)) {
                    published.add(kubelets.get(n).publishUntilDone(pod, NodePods.volume(pod), giveUp));
                }
            }
            CompletableFuture.allOf(published.toArray(CompletableFuture[]::new)).get(6, TimeUnit.MINUTES);
            Duration toPublished = Duration.between(zero, Instant.now());
            System.out.printf(Locale.ROOT, "fleet: %d volumes published in %.1f s%n", published.size(),
                    toPublished.toMillis() / 1000.0);
            writeIssued(issuedCsv, published, nodes, pods, zero);
            double[] startLatency = requestDurations(agents);
            Instant end = zero.plusSeconds(seconds);
            while (Instant.now().isBefore(end)) {
                SatokenProcess.pause(Duration.ofMillis(Math.min(60_000, Math.max(1, Duration.between(Instant.now(),
                        end).toMillis()))));
                for (SatokenProcess agent : agents) {
                    if (!agent.isAlive()) {
                        throw new IllegalStateException(agent.name() + " exited; log " + agent.log());
                    }
                }
                System.out.printf(Locale.ROOT, "fleet: %d s, %d TokenRequests in the audit log%n",
                        Duration.between(zero, Instant.now()).toSeconds(), lineCount(auditLog));
            }
            double serverCount = ApiServerMetrics.tokenRequests(server, null);
            double serverCreated = ApiServerMetrics.tokenRequests(server, "201");
            double agentCount = 0;
            for (SatokenProcess agent : agents) {
                agentCount += agent.metric("satoken_token_requests_total");
            }
            int[] perSecond = new int[seconds];
            long[] audit = countAudit(auditLog, zero, perSecond);
            StringBuilder csv = new StringBuilder("second,requests\n");
            for (int s = 0; s < seconds; s++) {
                csv.append(s).append(',').append(perSecond[s]).append('\n');
            }
            Files.writeString(measuredCsv, csv, StandardCharsets.UTF_8);
            double[] runLatency = requestDurations(agents);
            facts.append(String.format(Locale.ROOT, "Measured: kube-apiserver %s, %d nodes x %d pods (%d tokens of %d s),"
                            + " %d agent processes, from %s for %d s; every volume published %.1f s after time zero."
                            + " TokenRequests by the agents' user in the audit log: %d in the %d s (%d not answered"
                            + " 201, %d before time zero, %d after the end); kube-apiserver's apiserver_request_total"
                            + " over the whole server: %.0f (%.0f answered 201, including the %d made before time"
                            + " zero for the agents' own kubeconfig); the agents' satoken_token_requests_total: %.0f.%n",
                    server.gitVersion(), nodes, pods, nodes * (pods + pods / 2), lifetime, agents.size(), zero, seconds,
                    toPublished.toMillis() / 1000.0, audit[0], seconds, audit[1], audit[2], audit[3], serverCount,
                    serverCreated, audit[4], agentCount));
            facts.append(String.format(Locale.ROOT, "The agents' satoken_token_request_duration_seconds: %.0f requests"
                            + " by the end of the start (every volume published), mean %.0f ms; over the run %.0f,"
                            + " mean %.0f ms. Their satoken_csi_publish_seconds: %.0f NodePublishVolume calls,"
                            + " mean %.3f s.%n", startLatency[0], 1000 * startLatency[1] / startLatency[0],
                    runLatency[0], 1000 * runLatency[1] / runLatency[0], startLatency[2],
                    startLatency[3] / startLatency[2]));
            System.out.print(facts);
        } finally {
            for (SatokenProcess agent : agents) {
                agent.close();
            }
            for (KubeletCsiClient kubelet : kubelets) {
                kubelet.close();
            }
            E2E.closeKeepingLogs(server, "fleet-validation");
            try (Stream<Path> files = Files.walk(work)) {
                files.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
            }
        }
        return facts.toString();
    }

    /**
     * Each token's first issue, from the agents' own output: the modification time of each volume's token files,
     * read as soon as every volume is published (a token is written once the API server has answered, and its
     * first refresh is at least 0.7 lifetimes away). One line per token: {@code node,pod,audience,millis} after
     * time zero; FleetModel's {@code --issued} runs the agent's refresh code from these instants.
     */
    private static void writeIssued(Path csv, List<CompletableFuture<Path>> published, int nodes, int pods,
            Instant zero) throws Exception {
        StringBuilder out = new StringBuilder("node,pod,audience,millis\n");
        for (int n = 0; n < nodes; n++) {
            for (int p = 0; p < pods; p++) {
                Path target = published.get(n * pods + p).get();
                for (String audience : p % 2 == 1 ? List.of("vault", "sts") : List.of("vault")) {
                    Instant written = Files.getLastModifiedTime(target.resolve(audience)).toInstant();
                    out.append(n).append(',').append(p).append(',').append(audience).append(',')
                            .append(Duration.between(zero, written).toMillis()).append('\n');
                }
            }
        }
        Files.writeString(csv, out, StandardCharsets.UTF_8);
    }

    /**
     * The agents' TokenRequests so far and their summed duration in seconds (their request-duration timer), and their
     * NodePublishVolume calls and those calls' summed duration.
     */
    private static double[] requestDurations(List<SatokenProcess> agents) {
        double count = 0;
        double sum = 0;
        double publishes = 0;
        double publishSum = 0;
        for (SatokenProcess agent : agents) {
            count += agent.metric("satoken_token_request_duration_seconds_count");
            sum += agent.metric("satoken_token_request_duration_seconds_sum");
            publishes += agent.metric("satoken_csi_publish_seconds_count");
            publishSum += agent.metric("satoken_csi_publish_seconds_sum");
        }
        return new double[] {count, sum, publishes, publishSum};
    }

    /** FleetModel's pods: a {@code vault} token, and on every other pod an {@code sts} one too, in one volume. */
    static Map<String, String> attributes(int pod, long lifetime) {
        if (pod % 2 == 1) {
            return Map.of("projections", "- {path: vault, audience: vault, expirationSeconds: " + lifetime + "}\n"
                    + "- {path: sts, audience: sts, expirationSeconds: " + lifetime + "}\n");
        }
        return Map.of("path", "vault", "audience", "vault", "expirationSeconds", Long.toString(lifetime));
    }

    /**
     * Counts the agents' TokenRequests in each second after {@code zero} (by the time the server received each);
     * returns {counted, not answered 201, before zero, after the end, anyone else's before zero}.
     */
    private static long[] countAudit(Path auditLog, Instant zero, int[] perSecond) throws IOException {
        long[] counts = new long[5];
        try (BufferedReader in = Files.newBufferedReader(auditLog, StandardCharsets.UTF_8)) {
            for (String line = in.readLine(); line != null; line = in.readLine()) {
                JsonObject event = JsonParser.parseString(line).getAsJsonObject();
                Instant received = Instant.parse(event.get("requestReceivedTimestamp").getAsString());
                String user = event.getAsJsonObject("user").get("username").getAsString();
                if (!AGENT_USER.equals(user)) {
                    counts[4]++;
                    continue;
                }
                long millis = Duration.between(zero, received).toMillis();
                if (millis < 0) {
                    counts[2]++;
                } else if (millis / 1000 >= perSecond.length) {
                    counts[3]++;
                } else {
                    perSecond[(int) (millis / 1000)]++;
                    counts[0]++;
                    JsonObject status = event.getAsJsonObject("responseStatus");
                    if (status == null || status.get("code").getAsInt() != 201) {
                        counts[1]++;
                    }
                }
            }
        }
        return counts;
    }

    private static long lineCount(Path file) {
        try (Stream<String> lines = Files.lines(file)) {
            return lines.count();
        } catch (IOException e) {
            return -1;
        }
    }

    /** A {@code second,value} CSV (any further columns ignored) as one value per second, {@code seconds} long. */
    static double[] readCsv(Path file, int seconds) throws IOException {
        double[] values = new double[seconds];
        for (String line : Files.readAllLines(file).subList(1, Files.readAllLines(file).size())) {
            String[] cells = line.split(",");
            int s = Integer.parseInt(cells[0]);
            if (s < seconds) {
                values[s] = Double.parseDouble(cells[1]);
            }
        }
        return values;
    }

    static double[] buckets(double[] perSecond, int width, int from) {
        int n = Math.max(0, (perSecond.length - from) / width);
        double[] b = new double[n];
        for (int i = 0; i < n; i++) {
            for (int s = from + i * width; s < from + (i + 1) * width; s++) {
                b[i] += perSecond[s];
            }
        }
        return b;
    }

    /** The histograms' distance: the sum over buckets of |measured - model| over the model's total. */
    static double distance(double[] measured, double[] model, int width, int from) {
        double[] a = buckets(measured, width, from);
        double[] b = buckets(model, width, from);
        double diff = 0;
        double total = 0;
        for (int i = 0; i < a.length; i++) {
            diff += Math.abs(a[i] - b[i]);
            total += b[i];
        }
        return diff / total;
    }

    /** The second by which {@code share} of the requests in [from, to) were made. */
    static double quantile(double[] perSecond, int from, int to, double share) {
        double total = 0;
        for (int s = from; s < to; s++) {
            total += perSecond[s];
        }
        double sum = 0;
        for (int s = from; s < to; s++) {
            sum += perSecond[s];
            if (sum >= share * total) {
                return s;
            }
        }
        return to;
    }

    private static double sum(double[] v, int from, int to) {
        double t = 0;
        for (int s = from; s < Math.min(to, v.length); s++) {
            t += v[s];
        }
        return t;
    }

    private static double max(double[] v, int from, int to) {
        double m = 0;
        for (int s = from; s < Math.min(to, v.length); s++) {
            m = Math.max(m, v[s]);
        }
        return m;
    }

    /** One model's histograms: its expected one (the mean of its seeds) and, when given, one run (seed 1). */
    record Model(String name, double[] mean, double[] single) { }

    /**
     * The comparison, as a Markdown table with a column for the measurement and for each model's mean (and one run):
     * the TokenRequests in each refresh cycle; where each cycle's requests start and end (the seconds by which 2.5 %
     * and 97.5 % of the requests in its window were made; a cycle's window is 0.6–1.0 lifetimes for the first,
     * 1.2–2.0 for the second, 2.0 to the end for the third, shown when the model has requests there); its busiest
     * 10 s; the storm factor as FleetModel defines it (the busiest second over the mean second in 1.2–2.0 lifetimes;
     * only a single run has a busiest second); and the distance {@link #distance} to each model over 10 s and 30 s
     * buckets, for the whole run and for the refreshes alone (after the first minute). A model's one run against its
     * own mean shows the noise a single run carries. The goal, fixed before the runs: a distance of at most 20 %
     * with 30 s buckets over the whole run.
     */
    static String compare(double[] measured, List<Model> models, long lifetime) {
        int seconds = measured.length;
        int l = (int) lifetime;
        List<String> titles = new ArrayList<>(List.of("measured (real API server)"));
        List<double[]> cols = new ArrayList<>(List.of(measured));
        for (Model m : models) {
            titles.add(m.name() + ", mean of its seeds");
            cols.add(m.mean());
            if (m.single() != null) {
                titles.add(m.name() + ", one run (seed 1)");
                cols.add(m.single());
            }
        }
        StringBuilder md = new StringBuilder("| figure | " + String.join(" | ", titles) + " |\n|---|"
                + "---|".repeat(titles.size()) + "\n");
        row(md, "TokenRequests in the run", cols, v -> String.format(Locale.ROOT, "%,.0f", sum(v, 0, seconds)));
        int[][] cycles = {{0, l * 6 / 10}, {l * 6 / 10, l}, {l * 12 / 10, 2 * l}, {2 * l, seconds}};
        String[] names = {"start", "1st refresh cycle", "2nd refresh cycle", "3rd refresh cycle (to the end)"};
        for (int c = 0; c < cycles.length; c++) {
            int from = cycles[c][0];
            int to = Math.min(cycles[c][1], seconds);
            if (from >= to || sum(models.get(0).mean(), from, to) == 0) {
                continue; // a run too short to reach the cycle
            }
            row(md, names[c] + " (" + from + "–" + to + " s): TokenRequests", cols,
                    v -> String.format(Locale.ROOT, "%,.0f", sum(v, from, to)));
            if (c > 0) {
                row(md, names[c] + ": 2.5 % – 97.5 % of its requests by second", cols, v -> String.format(Locale.ROOT,
                        "%.0f – %.0f", quantile(v, from, to, 0.025), quantile(v, from, to, 0.975)));
                row(md, names[c] + ": busiest 10 s", cols, v -> String.format(Locale.ROOT, "%,.1f",
                        max(buckets(v, 10, 0), from / 10, to / 10)));
            }
        }
        int wFrom = l * 12 / 10;
        int wTo = Math.min(2 * l, seconds);
        List<Boolean> isMean = new ArrayList<>(List.of(false));
        for (Model m : models) {
            isMean.add(true);
            if (m.single() != null) {
                isMean.add(false);
            }
        }
        md.append("| storm factor (busiest second / mean, ").append(wFrom).append("–").append(wTo).append(" s) |");
        for (int i = 0; i < cols.size(); i++) {
            double mean = sum(cols.get(i), wFrom, wTo) / (wTo - wFrom);
            double peak = max(cols.get(i), wFrom, wTo);
            md.append(isMean.get(i) ? String.format(Locale.ROOT, " – / %.2f |", mean)
                    : String.format(Locale.ROOT, " %.0f / %.2f = %.1f |", peak, mean, peak / mean));
        }
        md.append('\n');
        for (Model m : models) {
            for (int width : new int[] {10, 30}) {
                for (int from : new int[] {0, 60}) {
                    md.append(String.format(Locale.ROOT, "| distance to %s, %d s buckets, %s |", m.name(), width,
                            from == 0 ? "whole run" : "refreshes (from 60 s)"));
                    md.append(String.format(Locale.ROOT, " **%.1f %%** |", 100 * distance(measured, m.mean(), width,
                            from)));
                    for (Model other : models) {
                        md.append(other == m ? " 0 |" : " – |");
                        if (other.single() != null) {
                            md.append(other == m ? String.format(Locale.ROOT, " %.1f %% |",
                                    100 * distance(m.single(), m.mean(), width, from)) : " – |");
                        }
                    }
                    md.append('\n');
                }
            }
        }
        md.append("\nDistance = sum over buckets of |measured - model| / model's total. Goal (fixed before the run):"
                + " at most 20 % with 30 s buckets over the whole run.\n");
        for (Model m : models) {
            double verdict = distance(measured, m.mean(), 30, 0);
            md.append(String.format(Locale.ROOT, "- %s: %.1f %%, %s 20 %%.%n", m.name(), 100 * verdict,
                    verdict <= 0.20 ? "within" : "NOT within"));
        }
        return md.toString();
    }

    private static void row(StringBuilder md, String what, List<double[]> cols,
            Function<double[], String> cell) {
        md.append("| ").append(what).append(" |");
        for (double[] v : cols) {
            md.append(' ').append(cell.apply(v)).append(" |");
        }
        md.append('\n');
    }

    private static String firstMinute(double[] tenSecondBuckets) {
        List<String> cells = new ArrayList<>();
        for (int i = 0; i < 6 && i < tenSecondBuckets.length; i++) {
            cells.add(String.format(Locale.ROOT, "%.0f", tenSecondBuckets[i]));
        }
        return String.join(" ", cells);
    }

    /** Measured against the model: TokenRequests per 10 s, as bars and a line, over the run. */
    static void plot(Path png, double[] measured, List<Model> models, int nodes, int pods, long lifetime)
            throws IOException {
        System.setProperty("java.awt.headless", "true");
        int width = 1000;
        int height = 440;
        int left = 70;
        int right = 20;
        int top = 40;
        int bottom = 60;
        double[] m = buckets(measured, 10, 0);
        List<double[]> es = models.stream().map(x -> buckets(x.mean(), 10, 0)).toList();
        // the start's burst (every token at once) would flatten the refreshes: the axis stops above the refreshes,
        // and the first minute's buckets are written as numbers
        double yMax = 0;
        for (int i = 6; i < m.length; i++) {
            yMax = Math.max(yMax, m[i]);
            for (double[] e : es) {
                yMax = Math.max(yMax, e[i]);
            }
        }
        yMax = Math.ceil(yMax * 1.15 / 10) * 10;
        BufferedImage image = new BufferedImage(width, height, BufferedImage.TYPE_INT_RGB);
        Graphics2D g = image.createGraphics();
        g.setRenderingHint(RenderingHints.KEY_ANTIALIASING, RenderingHints.VALUE_ANTIALIAS_ON);
        g.setRenderingHint(RenderingHints.KEY_TEXT_ANTIALIASING, RenderingHints.VALUE_TEXT_ANTIALIAS_ON);
        g.setColor(Color.WHITE);
        g.fillRect(0, 0, width, height);
        g.setFont(new Font(Font.SANS_SERIF, Font.PLAIN, 12));
        double plotW = width - left - right;
        double plotH = height - top - bottom;
        int n = m.length;
        g.setColor(Color.BLACK);
        g.drawString(String.format(Locale.ROOT, "TokenRequests per 10 s: %d agents x %d pods (%d tokens of %d s),"
                + " all published at 0 s; real kube-apiserver vs FleetModel (mean of its seeds)", nodes, pods, nodes * (pods + pods / 2),
                lifetime), left, 20);
        for (int t = 0; t <= 5; t++) {
            int y = (int) (top + plotH - plotH * t / 5);
            g.setColor(new Color(0xdd, 0xdd, 0xdd));
            g.drawLine(left, y, width - right, y);
            g.setColor(Color.BLACK);
            String label = String.format(Locale.ROOT, "%.0f", yMax * t / 5);
            g.drawString(label, left - 8 - g.getFontMetrics().stringWidth(label), y + 4);
        }
        for (int s = 0; s <= n * 10; s += 120) {
            int x = (int) (left + plotW * s / (n * 10));
            g.setColor(new Color(0xdd, 0xdd, 0xdd));
            g.drawLine(x, top, x, (int) (top + plotH));
            g.setColor(Color.BLACK);
            String label = s + " s";
            g.drawString(label, x - g.getFontMetrics().stringWidth(label) / 2, (int) (top + plotH + 16));
        }
        double barW = plotW / n;
        g.setColor(new Color(0x1f, 0x77, 0xb4, 0xa0));
        for (int i = 0; i < n; i++) {
            double h = Math.min(m[i], yMax) / yMax * plotH;
            g.fillRect((int) (left + i * barW) + 1, (int) (top + plotH - h), Math.max(1, (int) barW - 1), (int) h);
        }
        Color[] colours = {new Color(0xd6, 0x27, 0x28), new Color(0x2c, 0xa0, 0x2c), new Color(0xff, 0x7f, 0x0e)};
        g.setStroke(new BasicStroke(2f));
        List<String> first = new ArrayList<>(List.of("0–60 s by 10 s (cut at the axis)", "measured: "
                + firstMinute(m)));
        for (int k = 0; k < es.size(); k++) {
            double[] e = es.get(k);
            g.setColor(colours[k % colours.length]);
            for (int i = 1; i < n; i++) {
                double x1 = left + (i - 0.5) * barW;
                double x2 = left + (i + 0.5) * barW;
                double y1 = top + plotH - Math.min(e[i - 1], yMax) / yMax * plotH;
                double y2 = top + plotH - Math.min(e[i], yMax) / yMax * plotH;
                g.drawLine((int) x1, (int) y1, (int) x2, (int) y2);
            }
            first.add(models.get(k).name().replaceFirst("^model, ", "") + ": " + firstMinute(e));
        }
        g.setColor(Color.BLACK);
        for (int i = 0; i < first.size(); i++) {
            g.drawString(first.get(i), (int) (left + plotW * 0.06), top + 14 + 15 * i);
        }
        g.drawString("per 10 s", 8, top - 6);
        int legendY = height - 18;
        g.setColor(new Color(0x1f, 0x77, 0xb4, 0xa0));
        g.fillRect(left, legendY - 10, 14, 10);
        g.setColor(Color.BLACK);
        g.drawString("measured: the API server's audit log", left + 20, legendY);
        for (int k = 0; k < models.size(); k++) {
            int x = left + 250 + k * 200;
            g.setColor(colours[k % colours.length]);
            g.drawLine(x, legendY - 5, x + 20, legendY - 5);
            g.setColor(Color.BLACK);
            g.drawString(models.get(k).name(), x + 26, legendY);
        }
        g.dispose();
        ImageIO.write(image, "png", png.toFile());
    }
}
