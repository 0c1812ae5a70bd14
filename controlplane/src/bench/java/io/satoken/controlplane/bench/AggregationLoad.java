package io.satoken.controlplane.bench;

import io.kubernetes.client.custom.V1Patch;
import io.kubernetes.client.informer.ResourceEventHandler;
import io.kubernetes.client.informer.SharedIndexInformer;
import io.kubernetes.client.informer.SharedInformerFactory;
import io.kubernetes.client.openapi.ApiClient;
import io.kubernetes.client.openapi.apis.RbacAuthorizationV1Api;
import io.kubernetes.client.openapi.models.V1AggregationRule;
import io.kubernetes.client.openapi.models.V1ClusterRole;
import io.kubernetes.client.openapi.models.V1ClusterRoleList;
import io.kubernetes.client.openapi.models.V1LabelSelector;
import io.kubernetes.client.openapi.models.V1ObjectMeta;
import io.kubernetes.client.openapi.models.V1PolicyRule;
import io.kubernetes.client.util.PatchUtils;
import io.satoken.common.testing.KubeApiServer;
import io.satoken.common.testing.LoadOptions;
import io.satoken.common.testing.ProcStats;
import java.io.IOException;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Collectors;
import java.util.stream.Stream;

/**
 * The ClusterRole aggregation load test (BENCHMARKS.md, "ClusterRole aggregation"). For each side (our
 * controller, then kube-controller-manager's {@code clusterrole-aggregation} controller), against a fresh
 * kube-apiserver + etcd:
 *
 * <ol>
 * <li>creates the workload: {@code --leaves} roles, leaf {@code i} labelled with group {@code i % --groups}
 *     and holding two rules (one of its own, one that every leaf has), and {@code --aggregating}
 *     aggregating roles, aggregate {@code j} selecting group {@code j % --groups}: with the defaults
 *     (1,800 + 200 roles, 20 groups) each leaf is selected by 10 aggregates and each aggregate holds the
 *     rules of 90 leaves;
 * <li>starts the controller as its own process and waits until every aggregate holds the expected rules
 *     (the driver computes them itself) and the controller's CPU has stopped moving;
 * <li>moves {@code --flips} leaves, one after another, to another group (a JSON merge patch of the
 *     label): each flip changes the rules of 20 aggregates (10 lose the leaf's rule, 10 gain it). It waits
 *     until all 20 hold what they should before the next flip, and times that;
 * <li>reads the controller's CPU (utime + stime from /proc) before and after the flips, the API server's
 *     count of ClusterRole applies and updates, and the changes of aggregates its own watch saw; then every
 *     aggregating role's final rules, which must be the same on both sides.
 * </ol>
 *
 * <pre>
 * mvn -B -q -o install -DskipTests
 * mvn -B -q -o -pl controlplane -Pbench test-compile exec:exec \
 *   -Dbench.main=io.satoken.controlplane.bench.AggregationLoad -Dbench.args="--side both"
 * </pre>
 *
 * Options: {@code --side ours|upstream|both}, {@code --leaves 1800}, {@code --aggregating 200},
 * {@code --groups 20}, {@code --flips 100}, {@code --seed 1}, {@code --workers 5} (ours; upstream's is a
 * fixed 5), {@code --java-opts "..."} (ours, default {@value #DEFAULT_JAVA_OPTS}), {@code --keep}.
 */
public final class AggregationLoad {

    static final String DEFAULT_JAVA_OPTS = "-XX:+UseSerialGC -Xmx256m";
    private static final String GROUP = "bench.satoken.io/group";
    private static final String LEAF_PREFIX = "bench-leaf-";
    private static final String AGGREGATE_PREFIX = "bench-aggregate-";
    private static final long FLIP_TIMEOUT_NANOS = TimeUnit.SECONDS.toNanos(120);

    private final int leaves;
    private final int aggregating;
    private final int groups;
    private final int flips;
    private final long seed;
    private final int workers;
    private final String javaOpts;
    private final boolean keep;

    private AggregationLoad(Map<String, String> opts) {
        this.leaves = Integer.parseInt(opts.getOrDefault("leaves", "1800"));
        this.aggregating = Integer.parseInt(opts.getOrDefault("aggregating", "200"));
        this.groups = Integer.parseInt(opts.getOrDefault("groups", "20"));
        this.flips = Integer.parseInt(opts.getOrDefault("flips", "100"));
        this.seed = Long.parseLong(opts.getOrDefault("seed", "1"));
        this.workers = Integer.parseInt(opts.getOrDefault("workers", "5"));
        this.javaOpts = opts.getOrDefault("java-opts", DEFAULT_JAVA_OPTS);
        this.keep = opts.containsKey("keep");
    }

    public static void main(String[] args) throws Exception {
        Map<String, String> opts = LoadOptions.parse(args, Set.of("keep"));
        AggregationLoad load = new AggregationLoad(opts);
        String side = opts.getOrDefault("side", "both");
        List<Side> results = new ArrayList<>();
        for (String s : side.equals("both") ? List.of("ours", "upstream") : List.of(side)) {
            results.add(load.run(s));
        }
        if (results.size() == 2) {
            compare(results.get(0), results.get(1));
        }
        System.exit(0); // okhttp's threads are not daemons
    }

    /** What one side did; {@code finalRules} holds every aggregating role's rules at the end. */
    private record Side(String name, double[] latencies, double startCpu, double flipCpu, double flipWall,
            double applies, double updates, long changes, double apiServerFlipCpu, Map<String, List<String>> finalRules) {
    }

    private Side run(String side) throws Exception {
        Path tmp = Files.createTempDirectory("satoken-aggregation-bench-");
        Path log = tmp.resolve(side + ".log");
        say("== %s: %d leaves, %d aggregating roles, %d groups, %d flips, seed %d, tmp %s ==", side, leaves,
                aggregating, groups, flips, seed, tmp);
        Process controller = null;
        try (KubeApiServer server = KubeApiServer.create().start()) {
            Path kubeconfig = tmp.resolve("kubeconfig");
            server.writeKubeconfig(kubeconfig, server.adminToken());
            ApiClient admin = server.adminClient();
            Model model = new Model();
            long created = System.nanoTime();
            createWorkload(new RbacAuthorizationV1Api(admin), model);
            say("created %d ClusterRoles in %.1f s", leaves + aggregating, secs(System.nanoTime() - created));

            ApiClient watchClient = server.clientFor(server.adminToken());
            watchClient.setReadTimeout(0);
            Observer observer = new Observer(watchClient, model.expectedAll());
            observer.start();

            long spawned = System.nanoTime();
            controller = start(side, kubeconfig, tmp, log);
            long pid = controller.pid();
            observer.awaitConverged(System.nanoTime() + TimeUnit.MINUTES.toNanos(10));
            say("%s: initial aggregation done %.1f s after start", side, secs(System.nanoTime() - spawned));
            double startCpu = awaitQuietCpu(pid);
            Map<String, Double> threadsBefore = ProcStats.threadCpuSeconds(pid);
            long apiPid = ProcStats.pidWith("--secure-port=" + URI.create(server.url()).getPort());

            Map<String, Double> requestsBefore = clusterRoleRequests(server);
            double apiBefore = ProcStats.cpuSeconds(apiPid);
            observer.countChanges(true);
            RbacAuthorizationV1Api rbac = new RbacAuthorizationV1Api(admin);
            Random random = new Random(seed);
            double[] latencies = new double[flips];
            long flipsFrom = System.nanoTime();
            for (int f = 0; f < flips; f++) {
                int leaf = random.nextInt(leaves);
                int to = (model.group[leaf] + 1 + random.nextInt(groups - 1)) % groups;
                Set<String> affected = model.move(leaf, to);
                observer.expect(model.expected(affected));
                long t0 = System.nanoTime();
                String patch = "{\"metadata\":{\"labels\":{\"" + GROUP + "\":\"" + group(to) + "\"}}}";
                PatchUtils.patch(V1ClusterRole.class, () -> rbac.patchClusterRole(leafName(leaf), new V1Patch(patch))
                        .buildCall(null), V1Patch.PATCH_FORMAT_JSON_MERGE_PATCH, admin);
                long converged = observer.awaitConverged(t0 + FLIP_TIMEOUT_NANOS);
                latencies[f] = secs(converged - t0);
            }
            double flipWall = secs(System.nanoTime() - flipsFrom);
            double flipCpu = awaitQuietCpu(pid) - startCpu;
            say("%s: CPU s during the flips by thread (names without digits): %s", side,
                    delta(threadsBefore, ProcStats.threadCpuSeconds(pid)).entrySet().stream().filter(e -> e.getValue() >= 0.005)
                            .sorted(Map.Entry.<String, Double>comparingByValue().reversed())
                            .map(e -> String.format(Locale.ROOT, "%s %.2f", e.getKey(), e.getValue())).toList());
            double apiServerFlipCpu = ProcStats.cpuSeconds(apiPid) - apiBefore;
            observer.countChanges(false);
            Map<String, Double> requests = delta(requestsBefore, clusterRoleRequests(server));

            Map<String, List<String>> finalRules = aggregatingRules(rbac);
            long wrong = model.expectedAll().entrySet().stream()
                    .filter(e -> !e.getValue().equals(finalRules.get(e.getKey()))).count();
            if (wrong > 0) {
                throw new IllegalStateException(side + ": " + wrong + " aggregates do not hold the expected rules");
            }
            observer.stop();
            stop(controller, side);
            Side result = new Side(side, latencies, startCpu, flipCpu, flipWall,
                    requests.getOrDefault("APPLY", 0.0), requests.getOrDefault("PUT", 0.0) + requests.getOrDefault("UPDATE", 0.0),
                    observer.changes(), apiServerFlipCpu, finalRules);
            report(result, requests);
            scanLog(side, log);
            return result;
        } finally {
            if (controller != null && controller.isAlive()) {
                controller.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
            }
            if (keep) {
                say("kept %s", tmp);
            } else {
                try (Stream<Path> paths = Files.walk(tmp)) {
                    paths.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
                }
            }
        }
    }

    // --- the workload ---

    static String leafName(int i) {
        return String.format(Locale.ROOT, "%s%05d", LEAF_PREFIX, i);
    }

    static String aggregateName(int j) {
        return String.format(Locale.ROOT, "%s%04d", AGGREGATE_PREFIX, j);
    }

    static String group(int g) {
        return String.format(Locale.ROOT, "g%02d", g);
    }

    static V1PolicyRule ownRule(int leaf) {
        return new V1PolicyRule().apiGroups(List.of("bench.satoken.io")).resources(List.of("things-" + leaf))
                .verbs(List.of("get", "list", "watch"));
    }

    static V1PolicyRule sharedRule() {
        return new V1PolicyRule().apiGroups(List.of("")).resources(List.of("configmaps")).verbs(List.of("get"));
    }

    /** A rule as a string that is equal exactly when upstream's semantic equality holds (CR-4). */
    static String key(V1PolicyRule r) {
        return Stream.of(r.getVerbs(), r.getApiGroups(), r.getResources(), r.getResourceNames(), r.getNonResourceURLs())
                .map(l -> l == null ? "[]" : l.toString()).collect(Collectors.joining("|"));
    }

    static List<String> keys(List<V1PolicyRule> rules) {
        return rules == null ? List.of() : rules.stream().map(AggregationLoad::key).toList();
    }

    /** The leaves' groups, and what each aggregate should hold: upstream's formula, written for this workload. */
    private final class Model {
        final int[] group = new int[leaves];

        Model() {
            for (int i = 0; i < leaves; i++) {
                group[i] = i % groups;
            }
        }

        /** Moves a leaf; returns the aggregates whose rules change. */
        Set<String> move(int leaf, int to) {
            Set<String> affected = new LinkedHashSet<>();
            for (int j = 0; j < aggregating; j++) {
                if (j % groups == group[leaf] || j % groups == to) {
                    affected.add(aggregateName(j));
                }
            }
            group[leaf] = to;
            return affected;
        }

        Map<String, List<String>> expectedAll() {
            Map<String, List<String>> all = new TreeMap<>();
            for (int j = 0; j < aggregating; j++) {
                all.put(aggregateName(j), expected(j % groups));
            }
            return all;
        }

        Map<String, List<String>> expected(Set<String> aggregates) {
            Map<String, List<String>> some = new HashMap<>();
            aggregates.forEach(name -> some.put(name, expected(Integer.parseInt(name.substring(AGGREGATE_PREFIX.length())) % groups)));
            return some;
        }

        /** The selected leaves by name (zero-padded, so by index), each rule once, the first kept. */
        private List<String> expected(int g) {
            Set<String> rules = new LinkedHashSet<>();
            for (int i = 0; i < leaves; i++) {
                if (group[i] == g) {
                    rules.add(key(ownRule(i)));
                    rules.add(key(sharedRule()));
                }
            }
            return List.copyOf(rules);
        }
    }

    private void createWorkload(RbacAuthorizationV1Api rbac, Model model) throws Exception {
        List<V1ClusterRole> roles = new ArrayList<>();
        for (int i = 0; i < leaves; i++) {
            roles.add(new V1ClusterRole()
                    .metadata(new V1ObjectMeta().name(leafName(i)).labels(Map.of(GROUP, group(model.group[i]))))
                    .rules(List.of(ownRule(i), sharedRule())));
        }
        for (int j = 0; j < aggregating; j++) {
            roles.add(new V1ClusterRole().metadata(new V1ObjectMeta().name(aggregateName(j)))
                    .aggregationRule(new V1AggregationRule().addClusterRoleSelectorsItem(
                            new V1LabelSelector().matchLabels(Map.of(GROUP, group(j % groups)))))
                    .rules(null));
        }
        AtomicInteger next = new AtomicInteger();
        ExecutorService pool = Executors.newFixedThreadPool(4);
        List<Future<?>> done = new ArrayList<>();
        for (int t = 0; t < 4; t++) {
            done.add(pool.submit(() -> {
                for (int i = next.getAndIncrement(); i < roles.size(); i = next.getAndIncrement()) {
                    rbac.createClusterRole(roles.get(i)).execute();
                }
                return null;
            }));
        }
        for (Future<?> f : done) {
            f.get();
        }
        pool.shutdown();
    }

    // --- the controller processes ---

    private Process start(String side, Path kubeconfig, Path tmp, Path log) throws Exception {
        List<String> cmd = new ArrayList<>();
        if (side.equals("ours")) {
            cmd.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
            cmd.addAll(Arrays.asList(javaOpts.trim().split("\\s+")));
            cmd.addAll(List.of("-cp", System.getProperty("java.class.path"),
                    AggregationControllerMain.class.getName(), kubeconfig.toString(), Integer.toString(workers)));
        } else {
            cmd.addAll(List.of(KubeApiServer.assetsDir().resolve("kube-controller-manager").toString(),
                    "--controllers=clusterrole-aggregation", "--kubeconfig=" + kubeconfig, "--leader-elect=false",
                    "--use-service-account-credentials=false", "--secure-port=0"));
        }
        say("%s: %s", side, String.join(" ", cmd).replace(System.getProperty("java.class.path"), "<test classpath>"));
        Process p = new ProcessBuilder(cmd).redirectErrorStream(true).redirectOutput(log.toFile()).start();
        if (side.equals("ours")) {
            long deadline = System.nanoTime() + TimeUnit.MINUTES.toNanos(2);
            while (!Files.readString(log).contains("READY")) {
                if (!p.isAlive() || System.nanoTime() > deadline) {
                    throw new IllegalStateException("our controller did not start: " + Files.readString(log));
                }
                Thread.sleep(50);
            }
        }
        return p;
    }

    private static void stop(Process p, String side) throws InterruptedException {
        p.destroy(); // SIGTERM
        boolean exited = p.waitFor(30, TimeUnit.SECONDS);
        say("%s stopped by SIGTERM: %s", side, exited ? "exit code " + p.exitValue() : "NOT exited");
    }

    /**
     * Waits until the process has used no CPU for a second (at most 60 s), so the figures hold the work
     * that trailing events caused, and returns its CPU seconds.
     */
    private static double awaitQuietCpu(long pid) throws Exception {
        double last = ProcStats.cpuSeconds(pid);
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        while (System.nanoTime() < deadline) {
            Thread.sleep(1000);
            double now = ProcStats.cpuSeconds(pid);
            if (now - last < 0.015) {
                return now;
            }
            last = now;
        }
        say("  (CPU of %d still moving after 60 s)", pid);
        return last;
    }

    // --- watching the aggregates ---

    /** The driver's own watch of ClusterRoles: which aggregates do not yet hold what they should. */
    private static final class Observer {
        private final SharedInformerFactory factory;
        private final Map<String, List<String>> expected;
        private final Map<String, List<String>> current = new HashMap<>();
        private final Set<String> pending = new LinkedHashSet<>();
        private long convergedAt;
        private boolean counting;
        private long changes;

        Observer(ApiClient watchClient, Map<String, List<String>> expected) {
            this.expected = new HashMap<>(expected);
            this.pending.addAll(expected.keySet());
            this.factory = new SharedInformerFactory(watchClient);
            RbacAuthorizationV1Api rbac = new RbacAuthorizationV1Api(watchClient);
            SharedIndexInformer<V1ClusterRole> informer = factory.sharedIndexInformerFor(
                    p -> rbac.listClusterRole().resourceVersion(p.resourceVersion).timeoutSeconds(p.timeoutSeconds)
                            .watch(p.watch).buildCall(null),
                    V1ClusterRole.class, V1ClusterRoleList.class, 0);
            informer.addEventHandler(new ResourceEventHandler<>() {
                @Override
                public void onAdd(V1ClusterRole role) {
                    seen(role);
                }

                @Override
                public void onUpdate(V1ClusterRole before, V1ClusterRole after) {
                    seen(after);
                }

                @Override
                public void onDelete(V1ClusterRole role, boolean unknown) {
                }
            });
        }

        void start() {
            factory.startAllRegisteredInformers();
        }

        void stop() {
            factory.stopAllRegisteredInformers();
        }

        private synchronized void seen(V1ClusterRole role) {
            String name = role.getMetadata().getName();
            if (!expected.containsKey(name)) {
                return;
            }
            List<String> rules = keys(role.getRules());
            List<String> before = current.put(name, rules);
            if (counting && before != null && !before.equals(rules)) {
                changes++;
            }
            if (rules.equals(expected.get(name))) {
                if (pending.remove(name) && pending.isEmpty()) {
                    convergedAt = System.nanoTime();
                    notifyAll();
                }
            } else {
                pending.add(name);
            }
        }

        synchronized void expect(Map<String, List<String>> changed) {
            expected.putAll(changed);
            changed.forEach((name, rules) -> {
                if (!rules.equals(current.get(name))) {
                    pending.add(name);
                }
            });
        }

        /** Waits until every aggregate holds its expected rules; returns when that was first seen. */
        synchronized long awaitConverged(long deadline) throws InterruptedException {
            while (!pending.isEmpty()) {
                long left = deadline - System.nanoTime();
                if (left <= 0) {
                    throw new IllegalStateException("not converged in time; pending " + pending.size() + ": "
                            + pending.stream().limit(5).toList());
                }
                TimeUnit.NANOSECONDS.timedWait(this, left);
            }
            return convergedAt;
        }

        synchronized void countChanges(boolean on) {
            counting = on;
        }

        synchronized long changes() {
            return changes;
        }
    }

    private static Map<String, List<String>> aggregatingRules(RbacAuthorizationV1Api rbac) throws Exception {
        Map<String, List<String>> rules = new TreeMap<>();
        for (V1ClusterRole role : rbac.listClusterRole().execute().getItems()) {
            if (role.getAggregationRule() != null) {
                rules.put(role.getMetadata().getName(), keys(role.getRules()));
            }
        }
        return rules;
    }

    /** The API server's count of ClusterRole requests by verb, from its apiserver_request_total. */
    private static Map<String, Double> clusterRoleRequests(KubeApiServer server) throws IOException {
        String body = server.metricsText();
        Map<String, Double> counts = new TreeMap<>();
        for (String line : body.split("\n")) {
            if (line.startsWith("apiserver_request_total{") && line.contains("resource=\"clusterroles\"")) {
                counts.merge(line.replaceAll(".*verb=\"([^\"]*)\".*", "$1"),
                        Double.parseDouble(line.substring(line.lastIndexOf(' ') + 1)), Double::sum);
            }
        }
        return counts;
    }

    private static Map<String, Double> delta(Map<String, Double> before, Map<String, Double> after) {
        Map<String, Double> d = new TreeMap<>();
        after.forEach((k, v) -> d.put(k, v - before.getOrDefault(k, 0.0)));
        return d;
    }

    // --- the report ---

    private void report(Side s, Map<String, Double> requests) {
        double[] sorted = s.latencies().clone();
        Arrays.sort(sorted);
        say("%s: flip -> all 20 aggregates updated: p50 %.3f s, p99 %.3f s, max %.3f s, mean %.3f s; %d flips in %.1f s",
                s.name(), pct(sorted, 50), pct(sorted, 99), sorted[sorted.length - 1],
                Arrays.stream(sorted).average().orElse(0), flips, s.flipWall());
        say("%s: controller CPU: %.2f s from start to the initial aggregation done; %.2f s during the %d flips "
                        + "(%.1f ms per flip)", s.name(), s.startCpu(), s.flipCpu(), flips, 1000 * s.flipCpu() / flips);
        say("%s: ClusterRole requests to the API server during the flips: %s (the driver's own: %d PATCH, 1 LIST)",
                s.name(), requests, flips);
        say("%s: writes by the controller during the flips: %.0f applies, %.0f updates; aggregate changes seen: %d "
                + "(expected %d)", s.name(), s.applies(), s.updates(), s.changes(), 2L * (aggregating / groups) * flips);
        say("%s: kube-apiserver CPU during the flips: %.2f s", s.name(), s.apiServerFlipCpu());
    }

    private static void compare(Side ours, Side upstream) {
        boolean same = ours.finalRules().equals(upstream.finalRules());
        say("== side by side ==");
        say("final rules of all %d aggregating roles identical: %s", ours.finalRules().size(), same ? "yes" : "NO");
        if (!same) {
            ours.finalRules().forEach((name, rules) -> {
                if (!rules.equals(upstream.finalRules().get(name))) {
                    say("  differs: %s", name);
                }
            });
        }
        say("controller CPU during the flips: ours %.2f s, upstream %.2f s: upstream / ours = %.1f",
                ours.flipCpu(), upstream.flipCpu(), upstream.flipCpu() / ours.flipCpu());
        say("controller CPU from start to the initial aggregation: ours %.2f s, upstream %.2f s",
                ours.startCpu(), upstream.startCpu());
    }

    /**
     * Counts WARN/ERROR lines (Go: W and E lines) of a controller's log; kube-controller-manager's notices
     * that each controller not asked for "is disabled" are counted apart.
     */
    private static void scanLog(String side, Path log) throws IOException {
        List<String> lines = Files.readAllLines(log);
        List<String> bad = lines.stream().filter(l -> l.contains(" WARN ") || l.contains(" ERROR ")
                || l.startsWith("E1") || l.startsWith("W1")).toList();
        long disabled = bad.stream().filter(l -> l.endsWith("is disabled")).count();
        say("%s log: %d lines, %d WARN/ERROR (Go: W/E) lines besides %d \"<controller> is disabled\" notices", side,
                lines.size(), bad.size() - disabled, disabled);
        bad.stream().filter(l -> !l.endsWith("is disabled")).limit(8)
                .forEach(l -> say("  %s", l.length() > 240 ? l.substring(0, 240) + "..." : l));
        lines.stream().filter(l -> l.startsWith("METER ")).forEach(l -> say("  %s", l));
    }

    private static double pct(double[] sorted, int p) {
        int rank = (int) Math.ceil(p / 100.0 * sorted.length); // nearest rank
        return sorted[Math.max(0, rank - 1)];
    }

    private static double secs(long nanos) {
        return nanos / 1e9;
    }

    private static void say(String format, Object... args) {
        System.out.printf(Locale.ROOT, format + "%n", args);
        System.out.flush();
    }
}
