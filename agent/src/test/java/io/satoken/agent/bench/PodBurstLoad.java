package io.satoken.agent.bench;

import io.kubernetes.client.openapi.ApiClient;
import io.kubernetes.client.openapi.apis.CoreV1Api;
import io.kubernetes.client.openapi.models.V1Container;
import io.kubernetes.client.openapi.models.V1ObjectMeta;
import io.kubernetes.client.openapi.models.V1Pod;
import io.kubernetes.client.openapi.models.V1PodSpec;
import io.satoken.agent.runtime.AgentRbac;
import io.satoken.common.testing.KubeApiServer;
import io.satoken.common.testing.LoadOptions;
import io.satoken.common.testing.ProcStats;
import java.io.File;
import java.io.IOException;
import java.io.InputStream;
import java.net.HttpURLConnection;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.FileSystems;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardWatchEventKinds;
import java.nio.file.WatchEvent;
import java.nio.file.WatchKey;
import java.nio.file.WatchService;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import okhttp3.Request;
import okhttp3.Response;

/**
 * The pod-burst load test (BENCHMARKS.md, "Pod burst"): a real kube-apiserver + etcd, the agent as a
 * separate process started through {@code bin/satoken-agent run}, then N pods created at once on the
 * agent's node, each asking for two tokens (audiences {@code vault} and {@code sts}). It measures how
 * long the files take to appear, how many TokenRequests the agent made, the agent's memory right after
 * the burst and its CPU during the idle minute that follows. Not a JUnit test: a main class, run with
 * the {@code bench} profile from the agent module (it resolves {@code bin/} and {@code deploy/} there),
 * after {@code mvn -B -q -o -DskipTests install} has built the agent's jar:
 *
 * <pre>
 * mvn -B -q -o -pl agent -Pbench test-compile exec:exec \
 *   -Dbench.main=io.satoken.agent.bench.PodBurstLoad -Dbench.jvmArgs="-Xmx512m -XX:+UseSerialGC" \
 *   -Dbench.args="--qps 20 --burst 40"
 * </pre>
 *
 * Options: {@code --pods N} (1000), {@code --qps Q} (20), {@code --burst B} (40), {@code --threads T}
 * pod-creating threads (4), {@code --idle SECONDS} (60), {@code --java-opts "..."} the agent's JAVA_OPTS
 * ({@value #DEFAULT_JAVA_OPTS}: the DaemonSet's options, with MaxRAM standing in for its 320Mi memory
 * limit, so heap sizes, initial and maximum, are what they are in the container), {@code --keep} to
 * leave the temp dir.
 *
 * <p>The driver is kept light, because it shares the machine with the API server, etcd and the agent:
 * the files are found through inotify (a {@link WatchService} on the pods dir and on each pod's dir,
 * plus a rescan once a second in case an event was missed), not by polling every file; the agent's
 * /metrics is read once a second during the burst and not at all while idle. Token files
 * are only tested for existence, never read; the agent's log is scanned for WARN/ERROR lines and any
 * JWT-looking text in them is masked before printing.
 */
public final class PodBurstLoad {

    static final String DEFAULT_JAVA_OPTS = "-XX:MaxRAM=320m -XX:MaxRAMPercentage=70 -XX:+UseSerialGC";
    private static final String NODE = "bench-node";
    private static final String ANNOTATION = """
            - path: vault/token
              audience: vault
            - path: sts/token
              audience: sts
            """;
    private static final List<String> FILES = List.of("vault/token", "sts/token");
    private static final Pattern JWT = Pattern.compile("eyJ[A-Za-z0-9_-]*\\.[A-Za-z0-9_.-]*");

    private final int pods;
    private final double qps;
    private final int burst;
    private final int threads;
    private final int idleSeconds;
    private final String javaOpts;
    private final boolean keep;

    private PodBurstLoad(Map<String, String> opts) {
        this.pods = Integer.parseInt(opts.getOrDefault("pods", "1000"));
        this.qps = Double.parseDouble(opts.getOrDefault("qps", "20"));
        this.burst = Integer.parseInt(opts.getOrDefault("burst", "40"));
        this.threads = Integer.parseInt(opts.getOrDefault("threads", "4"));
        this.idleSeconds = Integer.parseInt(opts.getOrDefault("idle", "60"));
        this.javaOpts = opts.getOrDefault("java-opts", DEFAULT_JAVA_OPTS);
        this.keep = opts.containsKey("keep");
    }

    public static void main(String[] args) throws Exception {
        Map<String, String> opts = LoadOptions.parse(args, Set.of("keep"));
        new PodBurstLoad(opts).run();
        System.exit(0); // okhttp's threads are not daemons
    }

    private void run() throws Exception {
        Path launcher = Path.of("bin/satoken-agent").toAbsolutePath();
        if (!Files.isExecutable(launcher) || !Files.isRegularFile(Path.of("target/satoken-agent.jar"))) {
            throw new IllegalStateException("run in the agent module after `mvn -B -q -o -DskipTests install`; "
                    + "no " + launcher + " or target/satoken-agent.jar");
        }
        Path tmp = Files.createTempDirectory("satoken-bench-");
        Path root = tmp.resolve("root");
        Path agentLog = tmp.resolve("agent.log");
        say("pods=%d qps=%s burst=%d threads=%d idle=%ds JAVA_OPTS=\"%s\" tmp=%s", pods, fmt(qps), burst, threads,
                idleSeconds, javaOpts, tmp);
        Process agent = null;
        try (KubeApiServer server = KubeApiServer.create().start()) {
            say("kube-apiserver at %s", server.url());
            String agentToken = AgentRbac.token(server);
            Path kubeconfig = tmp.resolve("kubeconfig");
            server.writeKubeconfig(kubeconfig, agentToken);
            String namespace = server.createNamespace("bench");
            server.createServiceAccount(namespace, "app");
            Map<String, Double> serverBefore = serverRequests(server);

            Path config = Files.writeString(tmp.resolve("agent.yaml"), "mode: pods\nrootDir: " + root + "\n");
            int port = freePort();
            ProcessBuilder pb = new ProcessBuilder(launcher.toString(), "run", "--config", config.toString(),
                    "--kubeconfig", kubeconfig.toString(), "--node-name", NODE,
                    "--metrics-address", "127.0.0.1:" + port, "--qps", fmt(qps), "--burst", Integer.toString(burst))
                    .redirectErrorStream(true).redirectOutput(agentLog.toFile());
            pb.environment().put("JAVA_OPTS", javaOpts);
            long spawned = System.nanoTime();
            agent = pb.start();
            long pid = javaPid(agent.pid());
            String metricsUrl = "http://127.0.0.1:" + port;
            awaitReady(metricsUrl + "/readyz", agent, Duration.ofSeconds(120));
            long ready = System.nanoTime();
            Cpu atReady = cpu(pid);
            say("agent pid %d ready after %.2f s (CPU %.2f s, RSS %d KiB)", pid, secs(ready - spawned),
                    atReady.seconds(), ProcStats.statusKiB(pid, "VmRSS"));

            // --- the burst ---
            long apiPid = pidWith("--secure-port=" + URI.create(server.url()).getPort());
            String etcdUrl = cmdline(apiPid).replaceAll(".*--etcd-servers=(\\S+).*", "$1");
            long etcdPid = pidWith("--listen-client-urls=" + etcdUrl);
            long self = ProcessHandle.current().pid();
            Cpu[] before = {cpu(apiPid), cpu(etcdPid), cpu(pid), cpu(self)};
            Burst burst = new Burst(root.resolve("pods"));
            Sampler sampler = new Sampler(metricsUrl + "/metrics");
            sampler.start();
            long firstCall = System.nanoTime();
            ExecutorService creating = createPods(server.adminClient(), namespace, burst);
            burst.awaitAll(pods, Duration.ofMinutes(20)); // on this thread, while the pool creates the pods
            long allFiles = System.nanoTime();
            Cpu[] afterAll = {cpu(apiPid), cpu(etcdPid), cpu(pid), cpu(self)};
            creating.shutdown();
            long lastCreated = burst.created.values().stream().mapToLong(Long::longValue).max().orElseThrow();
            long rssAfter = ProcStats.statusKiB(pid, "VmRSS");
            long hwmAfter = ProcStats.statusKiB(pid, "VmHWM");
            String rssSplitAfter = rssSplit(pid);
            Cpu afterBurst = cpu(pid);
            sampler.stop();
            Metrics after = Metrics.scrape(metricsUrl + "/metrics");
            Map<String, Double> serverAfterBurst = serverRequests(server);

            // --- the idle period: nothing reads the agent's metrics or files meanwhile ---
            Cpu idleStart = cpu(pid);
            long idleFrom = System.nanoTime();
            Thread.sleep(idleSeconds * 1000L);
            Cpu idleEnd = cpu(pid);
            long idleTo = System.nanoTime();
            long rssIdle = ProcStats.statusKiB(pid, "VmRSS");
            long hwmIdle = ProcStats.statusKiB(pid, "VmHWM");
            String rssSplitIdle = rssSplit(pid);
            Metrics idle = Metrics.scrape(metricsUrl + "/metrics");
            Map<String, Double> serverAfter = serverRequests(server);
            say("API server, agent start to end of burst: %s; while idle: %s",
                    delta(serverBefore, serverAfterBurst), delta(serverAfterBurst, serverAfter));

            report(burst, firstCall, lastCreated, allFiles, after, idle, serverBefore, serverAfter, sampler,
                    rssAfter, hwmAfter, atReady, afterBurst, idleStart, idleEnd, idleTo - idleFrom, rssIdle, hwmIdle);
            say("RSS split after the burst: %s; at the end of the idle period: %s", rssSplitAfter, rssSplitIdle);
            say("CPU s used from the first create call to the last pod's files (%.1f s wall, %d cores): "
                            + "kube-apiserver %.1f, etcd %.1f, agent %.1f, this driver %.1f (incl. its JIT and GC)",
                    secs(allFiles - firstCall), Runtime.getRuntime().availableProcessors(),
                    afterAll[0].seconds() - before[0].seconds(), afterAll[1].seconds() - before[1].seconds(),
                    afterAll[2].seconds() - before[2].seconds(), afterAll[3].seconds() - before[3].seconds());

            long logBeforeStop = Files.size(agentLog);
            long stopFrom = System.nanoTime();
            agent.destroy(); // SIGTERM
            boolean exited = agent.waitFor(30, TimeUnit.SECONDS);
            say("agent stopped by SIGTERM: %s after %.2f s", exited ? "exit code " + agent.exitValue() : "NOT exited",
                    secs(System.nanoTime() - stopFrom));
            String log = Files.readString(agentLog, StandardCharsets.UTF_8);
            int cut = new String(Arrays.copyOf(log.getBytes(StandardCharsets.UTF_8), (int) logBeforeStop),
                    StandardCharsets.UTF_8).length();
            scanLog("agent log until SIGTERM", log.substring(0, cut));
            scanLog("agent log after SIGTERM", log.substring(cut));
        } finally {
            if (agent != null && agent.isAlive()) {
                agent.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
            }
            if (keep) {
                say("kept %s", tmp);
            } else {
                deleteTree(tmp);
            }
        }
    }

    // --- creating pods ---

    /** Starts {@code threads} threads creating the pods as fast as they can; returns at once. */
    private ExecutorService createPods(ApiClient admin, String namespace, Burst burst) {
        CoreV1Api api = new CoreV1Api(admin);
        AtomicInteger next = new AtomicInteger();
        ExecutorService pool = Executors.newFixedThreadPool(threads);
        for (int t = 0; t < threads; t++) {
            pool.execute(() -> {
                try {
                    for (int i = next.getAndIncrement(); i < pods; i = next.getAndIncrement()) {
                        V1Pod pod = new V1Pod()
                                .metadata(new V1ObjectMeta().name(String.format("pod-%05d", i))
                                        .annotations(Map.of("satoken.io/projections", ANNOTATION)))
                                // client-java sends "overhead": {} unless told not to; the API server refuses it
                                .spec(new V1PodSpec().overhead(null).nodeName(NODE).serviceAccountName("app")
                                        .addContainersItem(new V1Container().name("app").image("busybox")));
                        V1Pod created = api.createNamespacedPod(namespace, pod).execute();
                        burst.created(created.getMetadata().getUid(), System.nanoTime());
                    }
                } catch (Exception | Error e) {
                    burst.failed = e;
                }
            });
        }
        return pool;
    }

    /** Creation times and file times by pod uid; the file side is fed by inotify. */
    private static final class Burst {
        final Map<String, Long> created = new ConcurrentHashMap<>();
        final Map<String, Long> filesAt = new HashMap<>(); // main thread only
        volatile Throwable failed;
        private final Path podsDir;
        private final WatchService ws;
        private final WatchKey top;
        private final Map<WatchKey, String> keys = new HashMap<>();
        private final Map<String, WatchKey> byUid = new HashMap<>();
        int events;
        int rescans;

        /** Watches the pods dir from now on, so no pod dir created after this is missed. */
        Burst(Path podsDir) throws IOException {
            this.podsDir = podsDir;
            this.ws = FileSystems.getDefault().newWatchService();
            this.top = podsDir.register(ws, StandardWatchEventKinds.ENTRY_CREATE);
        }

        void created(String uid, long at) {
            created.put(uid, at);
        }

        void awaitAll(int expected, Duration timeout) throws IOException, InterruptedException {
            long deadline = System.nanoTime() + timeout.toNanos();
            try (ws) {
                rescan(ws);
                long lastScan = System.nanoTime();
                while (!complete(expected)) {
                    if (failed != null) {
                        throw new IllegalStateException("creating pods failed: " + failed, failed);
                    }
                    if (System.nanoTime() > deadline) {
                        throw new IllegalStateException("timed out: " + filesAt.size() + " of " + expected
                                + " pods have both files");
                    }
                    WatchKey key = ws.poll(200, TimeUnit.MILLISECONDS);
                    boolean overflow = false;
                    while (key != null) {
                        for (WatchEvent<?> e : key.pollEvents()) {
                            events++;
                            if (e.kind() == StandardWatchEventKinds.OVERFLOW) {
                                overflow = true;
                            } else if (key == top) {
                                watchPod(ws, e.context().toString());
                            } else {
                                check(keys.get(key));
                            }
                        }
                        key.reset();
                        key = ws.poll();
                    }
                    if (overflow || System.nanoTime() - lastScan > 1_000_000_000L) {
                        rescan(ws);
                        lastScan = System.nanoTime();
                    }
                }
            }
        }

        private boolean complete(int expected) {
            return created.size() == expected && filesAt.keySet().containsAll(created.keySet());
        }

        /** Registers pod dirs the events missed and checks every pod still without both files. */
        private void rescan(WatchService ws) throws IOException {
            rescans++;
            try (Stream<Path> dirs = Files.list(podsDir)) {
                for (Path d : (Iterable<Path>) dirs::iterator) {
                    watchPod(ws, d.getFileName().toString());
                }
            }
            for (String uid : new ArrayList<>(byUid.keySet())) {
                check(uid);
            }
        }

        private void watchPod(WatchService ws, String uid) throws IOException {
            if (byUid.containsKey(uid) || filesAt.containsKey(uid)) {
                return;
            }
            WatchKey key = podsDir.resolve(uid).register(ws, StandardWatchEventKinds.ENTRY_CREATE);
            keys.put(key, uid);
            byUid.put(uid, key);
            check(uid); // the files may have been written before the watch was in place
        }

        private void check(String uid) {
            if (uid == null || filesAt.containsKey(uid)) {
                return;
            }
            File dir = podsDir.resolve(uid).toFile();
            for (String f : FILES) {
                if (!new File(dir, f).exists()) { // follows the ..data symlinks; no exception when absent
                    return;
                }
            }
            filesAt.put(uid, System.nanoTime());
            WatchKey key = byUid.remove(uid);
            if (key != null) {
                key.cancel();
                keys.remove(key);
            }
        }
    }

    // --- the agent's metrics ---

    /** Reads satoken_token_requests_total once a second, for the observed request rate. */
    private static final class Sampler {
        final List<long[]> samples = new CopyOnWriteArrayList<>(); // {nanoTime, total requests}
        private final String url;
        private volatile boolean running = true;
        private Thread thread;

        Sampler(String url) {
            this.url = url;
        }

        void start() {
            thread = new Thread(() -> {
                while (running) {
                    try {
                        Metrics m = Metrics.scrape(url);
                        samples.add(new long[] {System.nanoTime(), Math.round(m.requests())});
                        Thread.sleep(1000);
                    } catch (InterruptedException e) {
                        return;
                    } catch (IOException e) {
                        say("metrics scrape failed: %s", e);
                    }
                }
            }, "metrics-sampler");
            thread.setDaemon(true);
            thread.start();
        }

        void stop() throws InterruptedException {
            running = false;
            thread.interrupt();
            thread.join();
        }

        /** The highest rate between two consecutive samples, requests/s. */
        double maxRate() {
            double max = 0;
            for (int i = 1; i < samples.size(); i++) {
                long[] a = samples.get(i - 1);
                long[] b = samples.get(i);
                max = Math.max(max, (b[1] - a[1]) / secs(b[0] - a[0]));
            }
            return max;
        }

        /** max over all sample pairs of (requests between them − qps × time between them): at most burst. */
        double maxExcess(double qps) {
            double max = 0;
            for (int i = 0; i < samples.size(); i++) {
                for (int j = i + 1; j < samples.size(); j++) {
                    long[] a = samples.get(i);
                    long[] b = samples.get(j);
                    max = Math.max(max, (b[1] - a[1]) - qps * secs(b[0] - a[0]));
                }
            }
            return max;
        }

        /** The mean rate from the first sample with a request to the first sample with the final count. */
        double steadyRate() {
            long[] first = samples.stream().filter(s -> s[1] > 0).findFirst().orElse(null);
            long total = samples.isEmpty() ? 0 : samples.get(samples.size() - 1)[1];
            long[] last = samples.stream().filter(s -> s[1] == total).findFirst().orElse(null);
            if (first == null || last == null || last[0] <= first[0]) {
                return Double.NaN;
            }
            return (last[1] - first[1]) / secs(last[0] - first[0]);
        }
    }

    /** The figures read from one /metrics scrape. */
    private record Metrics(Map<String, Double> values) {

        static Metrics scrape(String url) throws IOException {
            Map<String, Double> values = new TreeMap<>();
            for (String line : httpGet(url).split("\n")) {
                if (line.isEmpty() || line.startsWith("#")) {
                    continue;
                }
                int space = line.lastIndexOf(' ');
                String name = line.substring(0, space);
                if (name.startsWith("satoken_") || name.startsWith("jvm_memory_used_bytes")
                        || name.startsWith("jvm_memory_committed_bytes") || name.startsWith("jvm_threads_live")
                        || name.startsWith("jvm_gc_pause_seconds_count")) {
                    values.put(name, Double.parseDouble(line.substring(space + 1)));
                }
            }
            return new Metrics(values);
        }

        double sum(String prefix, String... labels) {
            return values.entrySet().stream()
                    .filter(e -> e.getKey().startsWith(prefix) && Arrays.stream(labels).allMatch(e.getKey()::contains))
                    .mapToDouble(Map.Entry::getValue).sum();
        }

        double requests() {
            return sum("satoken_token_requests_total{");
        }

        double requests(String result) {
            return sum("satoken_token_requests_total{", "result=\"" + result + "\"");
        }
    }

    /**
     * The API server's own count of the requests that matter here, from its apiserver_request_total:
     * TokenRequests by response code ("token 201") and pod LISTs ("pods LIST", the agent's informer
     * listing; the driver lists no pods).
     */
    private static Map<String, Double> serverRequests(KubeApiServer server) throws IOException {
        Request req = new Request.Builder().url(server.url() + "/metrics")
                .header("Authorization", "Bearer " + server.adminToken()).build();
        String body;
        try (Response r = server.adminClient().getHttpClient().newCall(req).execute()) {
            body = r.body().string();
        }
        Map<String, Double> counts = new TreeMap<>();
        for (String line : body.split("\n")) {
            if (!line.startsWith("apiserver_request_total{")) {
                continue;
            }
            double value = Double.parseDouble(line.substring(line.lastIndexOf(' ') + 1));
            if (line.contains("resource=\"serviceaccounts\"") && line.contains("subresource=\"token\"")
                    && line.contains("verb=\"POST\"")) {
                counts.merge("token " + line.replaceAll(".*code=\"([^\"]*)\".*", "$1"), value, Double::sum);
            } else if (line.contains("resource=\"pods\"") && line.contains("verb=\"LIST\"")) {
                counts.merge("pods LIST", value, Double::sum);
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

    private void report(Burst b, long firstCall, long lastCreated, long allFiles, Metrics after, Metrics idle,
            Map<String, Double> serverBefore, Map<String, Double> serverAfter, Sampler sampler, long rssAfter,
            long hwmAfter, Cpu atReady, Cpu afterBurst, Cpu idleStart, Cpu idleEnd, long idleNanos, long rssIdle,
            long hwmIdle) {
        long firstCreated = b.created.values().stream().mapToLong(Long::longValue).min().orElseThrow();
        double[] latency = b.created.entrySet().stream()
                .mapToDouble(e -> secs(b.filesAt.get(e.getKey()) - e.getValue())).sorted().toArray();
        long negative = Arrays.stream(latency).filter(l -> l < 0).count();
        say("== burst: %d pods x 2 projections, --qps %s --burst %d ==", pods, fmt(qps), burst);
        say("pod creation: first call to last created %.2f s (%.0f pods/s)", secs(lastCreated - firstCall),
                pods / secs(lastCreated - firstCall));
        say("first pod created -> last pod's files: %.2f s (from the first create call: %.2f s)",
                secs(allFiles - firstCreated), secs(allFiles - firstCall));
        say("per-pod latency (create returned -> both files): min %.3f s, p50 %.3f s, p90 %.3f s, p99 %.3f s, "
                + "max %.3f s%s", latency[0], pct(latency, 50), pct(latency, 90), pct(latency, 99),
                latency[latency.length - 1], negative == 0 ? "" : " (" + negative + " files seen before the create returned)");
        say("TokenRequests by the agent: %.0f (success %.0f, retryable %.0f, refused %.0f); distinct keys %d; "
                        + "API server counted %s", after.requests(), after.requests("success"),
                after.requests("retryable"), after.requests("refused"), 2 * pods, delta(serverBefore, serverAfter));
        say("cache: %.0f misses, %.0f hits; file writes: %.0f ok, %.0f failed; projections ready: %.0f, pending %.0f,"
                        + " failed %.0f", after.sum("satoken_token_cache_total{", "miss"),
                after.sum("satoken_token_cache_total{", "hit"), after.sum("satoken_file_writes_total{", "success"),
                after.sum("satoken_file_writes_total{", "failure"), after.sum("satoken_projections{", "\"ready\""),
                after.sum("satoken_projections{", "\"pending\""), after.sum("satoken_projections{", "\"failed\""));
        say("TokenRequest rate (agent /metrics every ~1 s, %d samples): max %.1f/s between two samples, %.1f/s "
                        + "mean while requesting; max(requests in a window - qps x window) = %.1f (limit: burst %d)",
                sampler.samples.size(), sampler.maxRate(), sampler.steadyRate(), sampler.maxExcess(qps), burst);
        say("agent after the burst: RSS %.1f MiB (peak VmHWM %.1f MiB), heap used %.1f MiB (tenured %.1f MiB) of "
                        + "%.1f MiB committed, non-heap used %.1f MiB, %.0f threads, %.0f GC pauses",
                rssAfter / 1024.0, hwmAfter / 1024.0, mib(after.sum("jvm_memory_used_bytes{", "area=\"heap\"")),
                mib(after.sum("jvm_memory_used_bytes{", "Tenured")),
                mib(after.sum("jvm_memory_committed_bytes{", "area=\"heap\"")),
                mib(after.sum("jvm_memory_used_bytes{", "area=\"nonheap\"")), after.sum("jvm_threads_live_threads"),
                after.sum("jvm_gc_pause_seconds_count"));
        say("agent CPU: %.2f s to start, %.2f s from ready to the end of the burst", atReady.seconds(),
                afterBurst.seconds() - atReady.seconds());
        double idleCpu = idleEnd.seconds() - idleStart.seconds();
        say("idle %.1f s after the burst: agent CPU %.2f s (user %.2f, sys %.2f) = %.2f %% of one core; RSS %.1f MiB "
                        + "(VmHWM %.1f MiB), heap used %.1f MiB; TokenRequests during idle: %.0f", secs(idleNanos), idleCpu,
                (idleEnd.user - idleStart.user) / (double) ProcStats.CLK_TCK, (idleEnd.system - idleStart.system) / (double) ProcStats.CLK_TCK,
                100 * idleCpu / secs(idleNanos), rssIdle / 1024.0, hwmIdle / 1024.0,
                mib(idle.sum("jvm_memory_used_bytes{", "area=\"heap\"")), idle.requests() - after.requests());
        say("driver: %d inotify events, %d rescans", b.events, b.rescans);
    }

    private static double pct(double[] sorted, int p) {
        int rank = (int) Math.ceil(p / 100.0 * sorted.length); // nearest rank
        return sorted[Math.max(0, rank - 1)];
    }

    /**
     * Counts WARN and ERROR lines of (part of) the agent's log and prints a few, each with the exception
     * line that follows it, if any; tokens masked.
     */
    private static void scanLog(String what, String text) {
        List<String> lines = text.isEmpty() ? List.of() : List.of(text.split("\n"));
        Map<String, List<String>> found = new TreeMap<>();
        for (int i = 0; i < lines.size(); i++) {
            String line = lines.get(i);
            for (String level : List.of(" WARN ", " ERROR ")) {
                if (line.contains(level)) {
                    String next = i + 1 < lines.size() ? lines.get(i + 1) : "";
                    boolean exception = !next.startsWith("[") && !next.startsWith("\t") && !next.isBlank();
                    found.computeIfAbsent(level.strip(), l -> new ArrayList<>()).add(line + (exception ? " | " + next : ""));
                }
            }
        }
        say("%s: %d lines, %s", what, lines.size(), found.isEmpty() ? "no WARN or ERROR lines"
                : found.entrySet().stream().map(e -> e.getValue().size() + " " + e.getKey()).toList());
        found.values().forEach(l -> l.stream().limit(5).forEach(line -> say("  %s", mask(line))));
        long jwtLike = lines.stream().filter(l -> JWT.matcher(l).find()).count();
        if (jwtLike > 0) {
            say("  !! %d log line(s) hold JWT-looking text (masked above)", jwtLike);
        }
    }

    private static String mask(String line) {
        String masked = JWT.matcher(line).replaceAll("<jwt masked>");
        return masked.length() > 300 ? masked.substring(0, 300) + "..." : masked;
    }

    // --- the agent process ---

    /** The launcher execs java, so its pid is the JVM's; if some launcher forks instead, its java child. */
    private static long javaPid(long pid) throws IOException, InterruptedException {
        for (int i = 0; i < 100; i++) {
            String cmd = cmdline(pid);
            if (cmd.startsWith("java") || cmd.contains("/java ")) {
                return pid;
            }
            for (Path task : list(Path.of("/proc/" + pid + "/task"))) {
                for (String child : Files.readString(task.resolve("children")).trim().split("\\s+")) {
                    if (!child.isEmpty() && cmdline(Long.parseLong(child)).contains("java")) {
                        return Long.parseLong(child);
                    }
                }
            }
            Thread.sleep(50);
        }
        throw new IllegalStateException("no java process under pid " + pid + ": " + cmdline(pid));
    }

    /** The one process whose command line holds {@code arg}, e.g. the API server by its port. */
    private static long pidWith(String arg) throws IOException {
        List<Long> found = new ArrayList<>();
        for (Path p : list(Path.of("/proc"))) {
            String name = p.getFileName().toString();
            if (name.chars().allMatch(Character::isDigit)) {
                try {
                    if (Arrays.asList(Files.readString(p.resolve("cmdline")).split("\0")).contains(arg)) {
                        found.add(Long.parseLong(name));
                    }
                } catch (IOException gone) {
                    // exited meanwhile
                }
            }
        }
        if (found.size() != 1) {
            throw new IllegalStateException("expected one process with " + arg + ", found " + found);
        }
        return found.get(0);
    }

    private static String cmdline(long pid) throws IOException {
        return Files.readString(Path.of("/proc/" + pid + "/cmdline")).replace('\0', ' ');
    }

    private static List<Path> list(Path dir) throws IOException {
        try (Stream<Path> s = Files.list(dir)) {
            return s.toList();
        }
    }

    private static void awaitReady(String url, Process agent, Duration timeout) throws Exception {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (System.nanoTime() < deadline) {
            if (!agent.isAlive()) {
                throw new IllegalStateException("agent exited with " + agent.exitValue() + " before /readyz");
            }
            try {
                HttpURLConnection c = (HttpURLConnection) URI.create(url).toURL().openConnection();
                c.setConnectTimeout(1000);
                c.setReadTimeout(2000);
                try {
                    if (c.getResponseCode() == 200) {
                        return;
                    }
                } finally {
                    c.disconnect();
                }
            } catch (IOException notYet) {
                // not listening yet
            }
            Thread.sleep(100);
        }
        throw new IllegalStateException("agent not ready within " + timeout);
    }

    /** utime and stime of a process, all threads, in clock ticks. */
    private record Cpu(long user, long system) {
        double seconds() {
            return (user + system) / (double) ProcStats.CLK_TCK;
        }
    }

    private static Cpu cpu(long pid) throws IOException {
        String stat = Files.readString(Path.of("/proc/" + pid + "/stat"));
        // fields after "(comm)": state is field 3, utime 14, stime 15
        String[] f = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
        return new Cpu(Long.parseLong(f[11]), Long.parseLong(f[12]));
    }

    /** VmRSS's parts: anonymous memory, mapped files (the jar, the CDS archive, libjvm) and shmem. */
    private static String rssSplit(long pid) throws IOException {
        return String.format(Locale.ROOT, "RssAnon %.1f MiB, RssFile %.1f MiB, RssShmem %.1f MiB",
                ProcStats.statusKiB(pid, "RssAnon") / 1024.0, ProcStats.statusKiB(pid, "RssFile") / 1024.0,
                ProcStats.statusKiB(pid, "RssShmem") / 1024.0);
    }

    // --- small things ---

    private static String httpGet(String url) throws IOException {
        HttpURLConnection c = (HttpURLConnection) URI.create(url).toURL().openConnection();
        c.setConnectTimeout(2000);
        c.setReadTimeout(10_000);
        try (InputStream in = c.getInputStream()) {
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        } finally {
            c.disconnect();
        }
    }

    private static int freePort() throws IOException {
        try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            return s.getLocalPort();
        }
    }

    private static void deleteTree(Path dir) {
        try (Stream<Path> paths = Files.walk(dir)) {
            paths.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
        } catch (IOException e) {
            say("could not delete %s: %s", dir, e);
        }
    }

    private static double secs(long nanos) {
        return nanos / 1e9;
    }

    private static double mib(double bytes) {
        return bytes / (1024 * 1024);
    }

    private static String fmt(double d) {
        return d == Math.rint(d) ? Long.toString((long) d) : Double.toString(d);
    }

    private static void say(String format, Object... args) {
        System.out.println("[bench] " + String.format(Locale.ROOT, format, args));
    }
}
