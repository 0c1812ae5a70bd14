package io.satoken.agent.bench;

import static io.satoken.agent.bench.BenchProcesses.cpu;

import io.grpc.Status;
import io.kubernetes.client.openapi.ApiClient;
import io.kubernetes.client.openapi.apis.CoreV1Api;
import io.kubernetes.client.openapi.models.V1CSIVolumeSource;
import io.kubernetes.client.openapi.models.V1Container;
import io.kubernetes.client.openapi.models.V1ObjectMeta;
import io.kubernetes.client.openapi.models.V1Pod;
import io.kubernetes.client.openapi.models.V1PodSpec;
import io.kubernetes.client.openapi.models.V1Volume;
import io.kubernetes.client.openapi.models.V1VolumeMount;
import io.satoken.agent.bench.BenchProcesses.Cpu;
import io.satoken.agent.runtime.AgentRbac;
import io.satoken.common.testing.ContainerJvm;
import io.satoken.common.testing.KubeApiServer;
import io.satoken.common.testing.LoadOptions;
import io.satoken.common.testing.NativeMemory;
import io.satoken.common.testing.ProcStats;
import java.io.File;
import java.io.IOException;
import java.io.InputStream;
import java.net.HttpURLConnection;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.HexFormat;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLongArray;
import java.util.concurrent.atomic.AtomicReference;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import java.util.stream.IntStream;
import java.util.stream.LongStream;
import java.util.stream.Stream;

/**
 * The pod-burst load test (BENCHMARKS.md, "Pod burst"): a real kube-apiserver + etcd, the agent as a CSI
 * node plugin in its own process (started through {@code bin/satoken-agent run}, {@code mode: csi}, its
 * kubeletDir in a temp dir), then N pods created at once on the agent's node, each with the CSI inline
 * volume the admission webhook injects (two tokens: audiences {@code vault} and {@code sts}), and for each
 * pod, as soon as it exists, the kubelet's volume set-up through the agent's socket ({@link BurstKubelet}:
 * all pods at once, each retried with the kubelet's backoff until it succeeds). It measures how long the
 * pods wait for their volumes, the latency of every NodePublishVolume call, the TokenRequests per pod, the
 * agent's memory right after the burst and its CPU during the idle minute that follows. Not a JUnit test:
 * a main class, run with the {@code bench} profile from the agent module (it resolves {@code bin/} and
 * {@code deploy/} there), after {@code mvn -B -q -o -DskipTests install} has built the agent's jar:
 *
 * <pre>
 * mvn -B -q -o -pl agent -Pbench test-compile exec:exec \
 *   -Dbench.main=io.satoken.agent.bench.PodBurstLoad -Dbench.jvmArgs="-Xmx512m -XX:+UseSerialGC" \
 *   -Dbench.args="--qps 20 --burst 40"
 * </pre>
 *
 * Options: {@code --pods N} (1000), {@code --qps Q} (20), {@code --burst B} (40), {@code --threads T}
 * pod-creating threads (4), {@code --idle SECONDS} (60), {@code --java-opts "..."} the agent's JAVA_OPTS
 * (default: the DaemonSet's environment, read from {@code deploy/30-daemonset.yaml} by {@link ContainerJvm},
 * with MaxRAM standing in for its memory limit, so heap sizes, initial and maximum, are what they are in the
 * container; --java-opts replaces only JAVA_OPTS), {@code --agent-jar PATH}
 * (target/satoken-agent.jar; copied into the temp dir first, so a rebuild during the run changes nothing),
 * {@code --java PATH} the agent's java (default: the PATH's; e.g. the image's jlink'd runtime,
 * {@code target/image-root-amd64/opt/java/openjdk/bin/java}),
 * {@code --reread-check on|off} the config's {@code rereadCheck} (on, the agent's default),
 * {@code --nmt} to add {@code -XX:NativeMemoryTracking=summary} and print the agent's native memory after
 * the burst (a diagnostic), {@code --census} to log the agent's class loading ({@link ClassCensus}) and print
 * the classes it loaded by library after the burst, {@code --keep} to leave the temp dir (its mounts are taken away all the same).
 *
 * <p>Mounting a tmpfs needs root (or CAP_SYS_ADMIN). The agent leaves its mounts when it stops, so the
 * driver unmounts everything under its temp dir at the end, whatever happened, and from a shutdown hook if
 * it is interrupted. Token files are only tested for existence, never read; the agent's log is scanned for
 * WARN/ERROR lines and any JWT-looking text in them is masked before printing.
 */
public final class PodBurstLoad {

    private static final String NODE = "bench-node";
    /** What the webhook injects for the annotation (controlplane's AgentTokenInjection). */
    private static final String VOLUME = "satoken-agent-tokens";
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
    private final ContainerJvm jvm;
    private final Path agentJar;
    /** The agent's java, e.g. the image's runtime (its rootfs under agent/target/image-root-amd64); null: the PATH's. */
    private final String java;
    private final boolean keep;
    private final boolean nmt;
    private final boolean census;
    /** The config's rereadCheck: whether the agent watches its token files for reads (on by default). */
    private final boolean rereadCheck;

    private PodBurstLoad(Map<String, String> opts) {
        this.pods = Integer.parseInt(opts.getOrDefault("pods", "1000"));
        this.qps = Double.parseDouble(opts.getOrDefault("qps", "20"));
        this.burst = Integer.parseInt(opts.getOrDefault("burst", "40"));
        this.threads = Integer.parseInt(opts.getOrDefault("threads", "4"));
        this.idleSeconds = Integer.parseInt(opts.getOrDefault("idle", "60"));
        this.rereadCheck = !"off".equals(opts.getOrDefault("reread-check", "on"));
        try {
            ContainerJvm daemonSet = ContainerJvm.read(Path.of("deploy/30-daemonset.yaml"), "agent");
            this.jvm = opts.containsKey("java-opts") ? daemonSet.withJavaOpts(opts.get("java-opts")) : daemonSet;
        } catch (IOException e) {
            throw new java.io.UncheckedIOException("cannot read deploy/30-daemonset.yaml", e);
        }
        this.agentJar = Path.of(opts.getOrDefault("agent-jar", "target/satoken-agent.jar")).toAbsolutePath();
        this.java = opts.get("java");
        this.keep = opts.containsKey("keep");
        this.nmt = opts.containsKey("nmt");
        this.census = opts.containsKey("census");
    }

    public static void main(String[] args) throws Exception {
        Map<String, String> opts = LoadOptions.parse(args, Set.of("keep", "nmt", "census"));
        new PodBurstLoad(opts).run();
        System.exit(0); // okhttp's threads are not daemons
    }

    private void run() throws Exception {
        Path launcher = Path.of("bin/satoken-agent").toAbsolutePath();
        if (!Files.isExecutable(launcher) || !Files.isRegularFile(agentJar)) {
            throw new IllegalStateException("run in the agent module after `mvn -B -q -o -DskipTests install`; "
                    + "no " + launcher + " or " + agentJar);
        }
        Path tmp = Files.createTempDirectory("satoken-bench-");
        Path kubeletDir = tmp.resolve("kubelet");
        Path agentLog = tmp.resolve("agent.log");
        Path jar = Files.copy(agentJar, tmp.resolve("satoken-agent.jar"));
        AtomicReference<Process> agentRef = new AtomicReference<>();
        Thread cleanUp = new Thread(() -> stopAndUnmount(agentRef.get(), tmp), "bench-cleanup");
        Runtime.getRuntime().addShutdownHook(cleanUp);
        say("pods=%d qps=%s burst=%d threads=%d idle=%ds environment %s tmp=%s", pods, fmt(qps), burst, threads,
                idleSeconds, jvm.environment(), tmp);
        say("agent jar %s (%s, sha256 %s), copied to %s", agentJar, Files.getLastModifiedTime(agentJar),
                sha256(agentJar).substring(0, 16), jar);
        say("load average at start: %s (%d cores)", BenchProcesses.loadAverage(), Runtime.getRuntime().availableProcessors());
        try (KubeApiServer server = KubeApiServer.create().start(); BurstKubelet kubelet = new BurstKubelet(kubeletDir)) {
            say("kube-apiserver at %s", server.url());
            String agentToken = AgentRbac.token(server);
            Path kubeconfig = tmp.resolve("kubeconfig");
            server.writeKubeconfig(kubeconfig, agentToken);
            String namespace = server.createNamespace("bench");
            server.createServiceAccount(namespace, "app");
            Map<String, Double> serverBefore = serverRequests(server);

            Path config = Files.writeString(tmp.resolve("agent.yaml"), "mode: csi\nkubeletDir: " + kubeletDir + "\n"
                    + "rereadCheck: " + rereadCheck + "\n");
            int port = freePort();
            ProcessBuilder pb = new ProcessBuilder(launcher.toString(), "run", "--config", config.toString(),
                    "--kubeconfig", kubeconfig.toString(), "--node-name", NODE,
                    "--metrics-address", "127.0.0.1:" + port, "--qps", fmt(qps), "--burst", Integer.toString(burst))
                    .redirectErrorStream(true).redirectOutput(agentLog.toFile());
            pb.environment().putAll(jvm.environment());
            Path classLog = tmp.resolve("class-load.log");
            pb.environment().put("JAVA_OPTS", jvm.javaOpts() + (nmt ? " -XX:NativeMemoryTracking=summary" : "")
                    + (census ? " " + String.format(ClassCensus.OPTION, classLog) : ""));
            pb.environment().put("SATOKEN_AGENT_JAR", jar.toString());
            if (java != null) {
                pb.environment().put("JAVA", java); // agent/bin/satoken-agent runs it
            }
            kubelet.warmUp();
            long spawned = System.nanoTime();
            Process agent = pb.start();
            agentRef.set(agent);
            String metricsUrl = "http://127.0.0.1:" + port;
            long pid;
            String nodeId;
            try {
                pid = BenchProcesses.javaPid(agent);
                nodeId = kubelet.register(agent, Duration.ofSeconds(120));
                awaitReady(metricsUrl + "/readyz", agent, Duration.ofSeconds(120));
            } catch (Exception e) {
                List<String> lines = Files.readAllLines(agentLog, StandardCharsets.UTF_8);
                say("the agent did not start: %s; the last lines of its log:", e.getMessage());
                lines.subList(Math.max(0, lines.size() - 20), lines.size()).forEach(l -> say("  %s", mask(l)));
                throw e;
            }
            long ready = System.nanoTime();
            Cpu atReady = cpu(pid);
            say("agent pid %d: its registration socket answered %.2f s after start; registered (node id %s) and "
                            + "ready after %.2f s (CPU %.2f s, RSS %d KiB, %d threads)", pid,
                    secs(kubelet.firstAnswer() - spawned), nodeId, secs(ready - spawned), atReady.seconds(),
                    ProcStats.statusKiB(pid, "VmRSS"), ProcStats.threads(pid));

            // --- the burst ---
            long apiPid = ProcStats.pidWith("--secure-port=" + URI.create(server.url()).getPort());
            String etcdUrl = ProcStats.cmdline(apiPid).replaceAll(".*--etcd-servers=(\\S+).*", "$1");
            long etcdPid = ProcStats.pidWith("--listen-client-urls=" + etcdUrl);
            long self = ProcessHandle.current().pid();
            Cpu[] before = {cpu(apiPid), cpu(etcdPid), cpu(pid), cpu(self)};
            Map<String, Double> threadsBefore = ProcStats.threadCpuSeconds(pid);
            Burst b = new Burst(pods);
            AgentScrape.Sampler sampler = new AgentScrape.Sampler(metricsUrl + "/metrics");
            sampler.start();
            long firstCall = System.nanoTime();
            ExecutorService creating = createPods(server.adminClient(), namespace, kubelet, b);
            b.await(Duration.ofMinutes(20));
            long allPublished = b.lastPublished();
            Cpu[] afterAll = {cpu(apiPid), cpu(etcdPid), cpu(pid), cpu(self)};
            String loadAfterBurst = BenchProcesses.loadAverage();
            creating.shutdown();
            long rssAfter = ProcStats.statusKiB(pid, "VmRSS");
            long hwmAfter = ProcStats.statusKiB(pid, "VmHWM");
            String rssSplitAfter = BenchProcesses.rssSplit(pid);
            Cpu afterBurst = cpu(pid);
            Map<String, Double> threadsAfterBurst = ProcStats.threadCpuSeconds(pid);
            if (census) {
                say("classes loaded by the agent until the end of the burst, by library (-Xlog:class+load):%n%s",
                        ClassCensus.format(ClassCensus.count(classLog)));
            }
            if (nmt) {
                say("native memory after the burst (jcmd VM.native_memory summary, committed):%n%s", nativeMemory(pid));
            }
            sampler.stop();
            AgentScrape after = AgentScrape.of(metricsUrl + "/metrics");
            Map<String, Double> serverAfterBurst = serverRequests(server);
            List<Path> mountPoints = BenchMounts.under(kubeletDir);
            int mounts = mountPoints.size();
            long tmpfsUsed = BenchMounts.usedBytes(mountPoints);

            // --- the idle period: nothing reads the agent's metrics or files, nor calls its socket ---
            Cpu idleStart = cpu(pid);
            long idleFrom = System.nanoTime();
            Thread.sleep(idleSeconds * 1000L);
            Cpu idleEnd = cpu(pid);
            Map<String, Double> threadsAfterIdle = ProcStats.threadCpuSeconds(pid);
            long idleTo = System.nanoTime();
            long rssIdle = ProcStats.statusKiB(pid, "VmRSS");
            long threadsIdle = ProcStats.threads(pid);
            long hwmIdle = ProcStats.statusKiB(pid, "VmHWM");
            String rssSplitIdle = BenchProcesses.rssSplit(pid);
            AgentScrape idle = AgentScrape.of(metricsUrl + "/metrics");
            Map<String, Double> serverAfter = serverRequests(server);
            say("API server, agent start to end of burst: %s; while idle: %s",
                    delta(serverBefore, serverAfterBurst), delta(serverAfterBurst, serverAfter));

            report(b, kubelet, firstCall, allPublished, after, serverBefore, serverAfterBurst, sampler, mounts);
            say("the volumes' tmpfs mounts hold %.1f KiB in all (%.1f KiB per mount; statfs, total minus free)",
                    tmpfsUsed / 1024.0, mounts == 0 ? 0.0 : tmpfsUsed / 1024.0 / mounts);
            say("agent after the burst: RSS %.1f MiB (peak VmHWM %.1f MiB), heap used %.1f MiB (tenured %.1f MiB) of "
                            + "%.1f MiB committed, non-heap used %.1f MiB, %.0f threads, %.0f GC pauses",
                    rssAfter / 1024.0, hwmAfter / 1024.0, mib(after.sum("jvm_memory_used_bytes{", "area=\"heap\"")),
                    mib(after.sum("jvm_memory_used_bytes{", "Tenured")),
                    mib(after.sum("jvm_memory_committed_bytes{", "area=\"heap\"")),
                    mib(after.sum("jvm_memory_used_bytes{", "area=\"nonheap\"")), after.sum("jvm_threads_live_threads"),
                    after.sum("jvm_gc_pause_seconds_count"));
            say("agent CPU: %.2f s to start and register, %.2f s from ready to the end of the burst; its child "
                            + "processes (mount): %.2f s during the burst, %.2f s while idle", atReady.seconds(),
                    afterBurst.seconds() - atReady.seconds(), afterBurst.childSeconds() - atReady.childSeconds(),
                    idleEnd.childSeconds() - idleStart.childSeconds());
            double idleCpu = idleEnd.seconds() - idleStart.seconds();
            say("idle %.1f s after the burst: agent CPU %.2f s (user %.2f, sys %.2f) = %.2f %% of one core; RSS %.1f MiB "
                            + "(VmHWM %.1f MiB), heap used %.1f MiB, %d threads; TokenRequests during idle: %.0f",
                    secs(idleTo - idleFrom),
                    idleCpu, (idleEnd.user() - idleStart.user()) / (double) ProcStats.CLK_TCK,
                    (idleEnd.system() - idleStart.system()) / (double) ProcStats.CLK_TCK, 100 * idleCpu / secs(idleTo - idleFrom),
                    rssIdle / 1024.0, hwmIdle / 1024.0, mib(idle.sum("jvm_memory_used_bytes{", "area=\"heap\"")),
                    threadsIdle, idle.requests() - after.requests());
            say("RSS split after the burst: %s; at the end of the idle period: %s", rssSplitAfter, rssSplitIdle);
            say("agent CPU s by thread, ready to end of burst (from the first create): %s",
                    ProcStats.busiestThreads(threadsBefore, threadsAfterBurst, 8));
            say("agent CPU s by thread, idle period: %s",
                    ProcStats.busiestThreads(threadsAfterBurst, threadsAfterIdle, 8));
            say("CPU s used from the first create call to the last pod's volume (%.1f s wall, %d cores): "
                            + "kube-apiserver %.1f, etcd %.1f, agent %.1f, this driver %.1f (incl. its JIT and GC)",
                    secs(allPublished - firstCall), Runtime.getRuntime().availableProcessors(),
                    afterAll[0].seconds() - before[0].seconds(), afterAll[1].seconds() - before[1].seconds(),
                    afterAll[2].seconds() - before[2].seconds(), afterAll[3].seconds() - before[3].seconds());
            say("load average after the burst: %s; after the idle period: %s", loadAfterBurst,
                    BenchProcesses.loadAverage());

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
            int[] unmounted = stopAndUnmount(agentRef.get(), tmp);
            say("unmounted %d mount(s) under %s; %d left", unmounted[0], tmp, unmounted[1]);
            if (keep) {
                say("kept %s", tmp);
            } else if (unmounted[1] == 0) {
                deleteTree(tmp);
            } else {
                say("NOT deleting %s: something is still mounted under it", tmp);
            }
            Runtime.getRuntime().removeShutdownHook(cleanUp);
        }
    }

    /** Kills the agent if it still runs, then unmounts everything under {@code tmp}; safe to call twice. */
    private static int[] stopAndUnmount(Process agent, Path tmp) {
        if (agent != null && agent.isAlive()) {
            try {
                agent.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
        return BenchMounts.unmountAll(tmp);
    }

    // --- creating pods and setting up their volumes ---

    /**
     * Starts {@code threads} threads creating the pods as fast as they can; as each create returns, the
     * kubelet starts setting up the pod's volume, without waiting for it. Returns at once.
     */
    private ExecutorService createPods(ApiClient admin, String namespace, BurstKubelet kubelet, Burst b) {
        CoreV1Api api = new CoreV1Api(admin);
        AtomicInteger next = new AtomicInteger();
        ExecutorService pool = Executors.newFixedThreadPool(threads);
        for (int t = 0; t < threads; t++) {
            pool.execute(() -> {
                try {
                    for (int i = next.getAndIncrement(); i < pods; i = next.getAndIncrement()) {
                        V1Pod created = api.createNamespacedPod(namespace, pod(i)).execute();
                        b.created.set(i, System.nanoTime());
                        int n = i;
                        V1Volume volume = created.getSpec().getVolumes().get(0);
                        Path target = kubelet.targetPath(created, VOLUME);
                        kubelet.setUpUntilDone(created, volume).whenComplete((at, error) -> {
                            if (error != null) {
                                b.failed = error;
                            } else {
                                b.published(n, at, FILES.stream().allMatch(f -> new File(target.toFile(), f).exists()));
                            }
                        });
                    }
                } catch (Exception | Error e) {
                    b.failed = e;
                }
            });
        }
        return pool;
    }

    /** Pod {@code i}: what the admission webhook makes of the annotation, a CSI volume mounted read-only. */
    private static V1Pod pod(int i) {
        return new V1Pod()
                .metadata(new V1ObjectMeta().name(String.format("pod-%05d", i))
                        .annotations(Map.of("satoken.io/projections", ANNOTATION)))
                // client-java sends "overhead": {} unless told not to; the API server refuses it
                .spec(new V1PodSpec().overhead(null).nodeName(NODE).serviceAccountName("app")
                        .addVolumesItem(new V1Volume().name(VOLUME).csi(new V1CSIVolumeSource()
                                .driver(BurstKubelet.DRIVER).readOnly(true)
                                .volumeAttributes(Map.of("projections", ANNOTATION))))
                        .addContainersItem(new V1Container().name("app").image("busybox")
                                .addVolumeMountsItem(new V1VolumeMount().name(VOLUME)
                                        .mountPath("/var/run/secrets/satoken").readOnly(true))));
    }

    /** When each pod was created and when its volume was published, by pod number ({@link System#nanoTime}). */
    private static final class Burst {
        final AtomicLongArray created;
        final AtomicLongArray published;
        final AtomicInteger filesMissing = new AtomicInteger();
        private final CountDownLatch done;
        volatile Throwable failed;

        Burst(int pods) {
            created = new AtomicLongArray(pods);
            published = new AtomicLongArray(pods);
            done = new CountDownLatch(pods);
        }

        void published(int pod, long at, boolean filesThere) {
            if (!filesThere) {
                filesMissing.incrementAndGet();
            }
            published.set(pod, at);
            done.countDown();
        }

        void await(Duration timeout) throws InterruptedException {
            Instant deadline = Instant.now().plus(timeout);
            long lastSay = System.nanoTime();
            while (!done.await(1, TimeUnit.SECONDS)) {
                if (failed != null) {
                    throw new IllegalStateException("the burst failed: " + failed, failed);
                }
                if (Instant.now().isAfter(deadline)) {
                    throw new IllegalStateException("timed out: " + (published.length() - done.getCount()) + " of "
                            + published.length() + " volumes published");
                }
                if (System.nanoTime() - lastSay > 10_000_000_000L) {
                    say("... %d of %d volumes published", published.length() - done.getCount(), published.length());
                    lastSay = System.nanoTime();
                }
            }
        }

        long firstCreated() {
            return values(created).min().orElseThrow();
        }

        long lastCreated() {
            return values(created).max().orElseThrow();
        }

        long lastPublished() {
            return values(published).max().orElseThrow();
        }

        private static LongStream values(AtomicLongArray a) {
            return IntStream.range(0, a.length()).mapToLong(a::get);
        }
    }

    // --- the report ---

    private void report(Burst b, BurstKubelet kubelet, long firstCall, long allPublished, AgentScrape after,
            Map<String, Double> serverBefore, Map<String, Double> serverAfter, AgentScrape.Sampler sampler, int mounts) {
        double[] perPod = new double[pods];
        for (int i = 0; i < pods; i++) {
            perPod[i] = secs(b.published.get(i) - b.created.get(i));
        }
        Arrays.sort(perPod);
        List<BurstKubelet.Call> calls = new ArrayList<>(kubelet.publishCalls);
        double[] ok = calls.stream().filter(c -> c.code() == Status.Code.OK)
                .mapToDouble(BurstKubelet.Call::seconds).sorted().toArray();
        double[] failed = calls.stream().filter(c -> c.code() != Status.Code.OK)
                .mapToDouble(BurstKubelet.Call::seconds).sorted().toArray();
        Map<String, Long> byCode = calls.stream().collect(Collectors.groupingBy(c -> c.code().name(), TreeMap::new,
                Collectors.counting()));
        Map<String, Double> server = delta(serverBefore, serverAfter);
        double tokenCreated = server.getOrDefault("token 201", 0.0);
        say("== burst: %d pods x 1 CSI volume x 2 tokens, --qps %s --burst %d ==", pods, fmt(qps), burst);
        say("pod creation: first call to last created %.2f s (%.0f pods/s)", secs(b.lastCreated() - firstCall),
                pods / secs(b.lastCreated() - firstCall));
        say("first pod created -> last pod's volume published (files in place): %.2f s (from the first create call: "
                + "%.2f s)", secs(allPublished - b.firstCreated()), secs(allPublished - firstCall));
        say("per pod, create returned -> its volume published (retries included): min %.3f s, p50 %.3f s, p90 %.3f s, "
                + "p99 %.3f s, max %.3f s", perPod[0], pct(perPod, 50), pct(perPod, 90), pct(perPod, 99),
                perPod[perPod.length - 1]);
        say("NodePublishVolume calls (kubelet side, call -> answer): %d, by status %s; OK: p50 %s, p99 %s, max %s, "
                + "mean %s; failed: %s", calls.size(), byCode, pctOrNone(ok, 50), pctOrNone(ok, 99), maxOrNone(ok),
                ok.length == 0 ? "-" : String.format(Locale.ROOT, "%.3f s", Arrays.stream(ok).average().orElseThrow()),
                failed.length == 0 ? "none" : "p50 " + pctOrNone(failed, 50) + ", max " + maxOrNone(failed));
        double[] capabilities = kubelet.capabilityCallTimes.stream().mapToDouble(BurstKubelet.Call::seconds).sorted()
                .toArray();
        say("NodeGetCapabilities calls (kubelet side, call -> answer; two before each NodePublishVolume): p50 %s, "
                + "p99 %s, max %s", pctOrNone(capabilities, 50), pctOrNone(capabilities, 99), maxOrNone(capabilities));
        say("kubelet side: %d volume set-ups retried; %d NodeGetCapabilities calls; %d connections; at most %d "
                + "NodePublishVolume calls in flight; %d published volumes without both files at the answer; "
                + "%d mounts under the kubelet dir", kubelet.retried.get(), kubelet.capabilityCalls.get(),
                kubelet.connections.get(), kubelet.maxInFlight.get(), b.filesMissing.get(), mounts);
        say("agent's satoken_csi_publish_seconds: %s",
                after.values().entrySet().stream().filter(e -> e.getKey().startsWith("satoken_csi_publish_seconds_")
                                && !e.getKey().startsWith("satoken_csi_publish_seconds_bucket"))
                        .map(e -> e.getKey().replace("satoken_csi_publish_seconds_", "") + "=" + fmt3(e.getValue()))
                        .collect(Collectors.joining(", ")));
        say("TokenRequests by the agent: %.0f (success %.0f, retryable %.0f, refused %.0f) = %.2f per pod; distinct "
                        + "keys %d; API server counted %s = %.2f created per pod", after.requests(),
                after.requests("success"), after.requests("retryable"), after.requests("refused"),
                after.requests() / pods, 2 * pods, server, tokenCreated / pods);
        say("cache: %.0f misses, %.0f hits; file writes: %.0f ok, %.0f failed; projections ready: %.0f, pending %.0f,"
                        + " failed %.0f", after.sum("satoken_token_cache_total{", "miss"),
                after.sum("satoken_token_cache_total{", "hit"), after.sum("satoken_file_writes_total{", "success"),
                after.sum("satoken_file_writes_total{", "failure"), after.sum("satoken_projections{", "\"ready\""),
                after.sum("satoken_projections{", "\"pending\""), after.sum("satoken_projections{", "\"failed\""));
        say("rereadCheck %s: %.0f token directories watched for reads, %.0f reported not re-read", rereadCheck ? "on"
                : "off", after.sum("satoken_read_watched_directories"), after.sum("satoken_token_not_reread_total"));
        say("TokenRequest rate (agent /metrics every ~1 s, %d samples): max %.1f/s between two samples, %.1f/s "
                        + "mean while requesting; max(requests in a window - qps x window) = %.1f (limit: burst %d)",
                sampler.samples.size(), sampler.maxRate(), sampler.steadyRate(), sampler.maxExcess(qps), burst);
    }

    /** The committed sizes of {@code jcmd <pid> VM.native_memory summary}, one category a line. */
    private static String nativeMemory(long pid) throws IOException, InterruptedException {
        return NativeMemory.committed(pid).stream().map(l -> "[bench]   " + l).collect(Collectors.joining("\n"));
    }

    private static double pct(double[] sorted, int p) {
        int rank = (int) Math.ceil(p / 100.0 * sorted.length); // nearest rank
        return sorted[Math.max(0, rank - 1)];
    }

    private static String pctOrNone(double[] sorted, int p) {
        return sorted.length == 0 ? "-" : String.format(Locale.ROOT, "%.3f s", pct(sorted, p));
    }

    private static String maxOrNone(double[] sorted) {
        return sorted.length == 0 ? "-" : String.format(Locale.ROOT, "%.3f s", sorted[sorted.length - 1]);
    }

    /**
     * The API server's own count of the requests that matter here, from its apiserver_request_total:
     * TokenRequests by response code ("token 201"), pod GETs (the agent reads each published volume's pod)
     * and pod LISTs (none expected: the agent in CSI mode neither lists nor watches pods; the driver reads
     * no pods).
     */
    private static Map<String, Double> serverRequests(KubeApiServer server) throws IOException {
        String body = server.metricsText();
        Map<String, Double> counts = new TreeMap<>();
        for (String line : body.split("\n")) {
            if (!line.startsWith("apiserver_request_total{")) {
                continue;
            }
            double value = Double.parseDouble(line.substring(line.lastIndexOf(' ') + 1));
            if (line.contains("resource=\"serviceaccounts\"") && line.contains("subresource=\"token\"")
                    && line.contains("verb=\"POST\"")) {
                counts.merge("token " + line.replaceAll(".*code=\"([^\"]*)\".*", "$1"), value, Double::sum);
            } else if (line.contains("resource=\"pods\"") && line.contains("subresource=\"\"")
                    && (line.contains("verb=\"LIST\"") || line.contains("verb=\"GET\""))) {
                counts.merge("pods " + line.replaceAll(".*verb=\"([^\"]*)\".*", "$1"), value, Double::sum);
            }
        }
        return counts;
    }

    private static Map<String, Double> delta(Map<String, Double> before, Map<String, Double> after) {
        Map<String, Double> d = new TreeMap<>();
        after.forEach((k, v) -> d.put(k, v - before.getOrDefault(k, 0.0)));
        return d;
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
                    // a log line starts with its time; the line after it is an exception's only at --log-level debug
                    boolean exception = !next.isBlank() && !Character.isDigit(next.charAt(0)) && !next.startsWith("\t");
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

    // --- small things ---

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

    private static String sha256(Path file) throws Exception {
        MessageDigest digest = MessageDigest.getInstance("SHA-256");
        try (InputStream in = Files.newInputStream(file)) {
            byte[] buf = new byte[1 << 16];
            for (int n = in.read(buf); n > 0; n = in.read(buf)) {
                digest.update(buf, 0, n);
            }
        }
        return HexFormat.of().formatHex(digest.digest());
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

    private static String fmt3(double d) {
        return d == Math.rint(d) ? Long.toString((long) d) : String.format(Locale.ROOT, "%.3f", d);
    }

    static void say(String format, Object... args) {
        System.out.println("[bench] " + String.format(Locale.ROOT, format, args));
    }
}
