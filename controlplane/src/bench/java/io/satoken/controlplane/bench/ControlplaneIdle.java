package io.satoken.controlplane.bench;

import io.kubernetes.client.openapi.ApiException;
import io.kubernetes.client.openapi.apis.CoreV1Api;
import io.kubernetes.client.openapi.models.V1Namespace;
import io.kubernetes.client.openapi.models.V1ObjectMeta;
import io.kubernetes.client.openapi.models.V1Secret;
import io.kubernetes.client.openapi.models.V1ServiceAccount;
import io.satoken.common.testing.ContainerJvm;
import io.satoken.common.testing.KubeApiServer;
import io.satoken.common.testing.LoadOptions;
import io.satoken.common.testing.NativeMemory;
import io.satoken.common.testing.ProcStats;
import io.satoken.controlplane.kube.Informers;
import io.satoken.controlplane.runtime.ControllerSelection;
import io.satoken.controlplane.tokens.TokensController;
import java.io.IOException;
import java.net.http.HttpClient;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;

/**
 * The control plane at idle in a cluster of many namespaces: its RSS and CPU once the controllers
 * have converged and nothing changes.
 *
 * <ol>
 * <li>starts a real kube-apiserver + etcd and creates N namespaces (8 threads) before the control plane starts,
 *     so its informers' first list carries them all;</li>
 * <li>starts the control plane from its shaded jar as its own process: {@code run --controllers=LIST
 *     --leader-elect=false --service-account-private-key-file .. --root-ca-file ..}, with the controllers'
 *     Deployment's {@code JAVA_OPTS} ({@code deploy/30-deployment.yaml}) and its other environment variables
 *     ({@code MALLOC_ARENA_MAX}), with {@code -XX:MaxRAM} standing in for its memory limit; waits for {@code /readyz} (with
 *     {@code --leader-elect}, for the Lease too: a follower is ready at once);</li>
 * <li>waits until the selected controllers have converged, polling with list calls: every namespace has the
 *     ServiceAccount {@code default} (serviceaccounts), the ConfigMap {@code kube-root-ca.crt} (root-ca) and, with
 *     {@code --legacy-token-auto-create} only, a filled token Secret that {@code default} lists (tokens: without
 *     that flag the controller fills and cleans up token Secrets but creates none); then until every work queue
 *     is empty, and {@code --settle} seconds more;</li>
 * <li>idles: nothing but /proc reads for {@code --idle} seconds. RSS ({@code VmRSS}), CPU (utime + stime, and by
 *     thread) and the thread count are read at the window's start, every 10 s and at its end; {@code /metrics} is
 *     scraped just before and just after the window (outside it, so the scrapes' own CPU is not counted) for the
 *     control plane's {@code satoken_api_requests_total}, its reconciles and its heap. Also the machine's busy
 *     share over the window (/proc/stat). Prints a Markdown table at the end.</li>
 * </ol>
 *
 * <pre>
 * mvn -B -q -o -DskipTests install
 * mvn -B -q -o -pl controlplane -Pbench test-compile exec:exec \
 *   -Dbench.main=io.satoken.controlplane.bench.ControlplaneIdle -Dbench.args="--namespaces 1000 --idle 120"
 * </pre>
 *
 * Options: {@code --namespaces 1000}, {@code --idle 120} and {@code --settle 10} (seconds), {@code --controllers
 * '*'} (as {@code run} and the Deployment default to), {@code --legacy-token-auto-create} (passed on; a token
 * Secret per {@code default} account), {@code --leader-elect} (hold a Lease in kube-system, as the Deployment
 * does: its renewals are API requests at idle), {@code --java-opts '...'} (replaces all the JVM options above;
 * the Deployment's, with {@code -XX:MaxRAM=512m} first),
 * {@code --nmt} (adds {@code -XX:NativeMemoryTracking=summary}; prints {@code jcmd PID VM.native_memory summary}
 * after the idle window), {@code --keep} (keeps the temp dir: kubeconfig and the control plane's log).
 */
public final class ControlplaneIdle {

    /** The controllers' Deployment, relative to the controlplane module (where exec:exec runs). */
    static final Path DEPLOYMENT = Path.of("deploy", "30-deployment.yaml");
    private static final int SAMPLE_SECONDS = 10;
    private static final int CREATE_THREADS = 8;

    /** One /proc reading of the control plane, {@code seconds} into the idle window. */
    record Sample(double seconds, long rssKiB, double cpuSeconds, long threads) {
    }

    /** How many namespaces have what each selected controller gives every namespace. */
    record Coverage(int accounts, int rootCa, int tokens) {
    }

    /** What the idle window measured; API requests by "VERB CODE", only those that moved. */
    record Idle(List<Sample> samples, Map<String, Long> apiRequests, long reconciles, double machineBusy,
            String loadBefore, String loadAfter, String threadCpu, long hwmKiB, String rssSplit, double heapBytes) {

        Sample first() {
            return samples.get(0);
        }

        Sample last() {
            return samples.get(samples.size() - 1);
        }

        double cpuSeconds() {
            return last().cpuSeconds() - first().cpuSeconds();
        }

        double millicores() {
            return 1000 * cpuSeconds() / last().seconds();
        }

        long maxRssKiB() {
            return samples.stream().mapToLong(Sample::rssKiB).max().orElseThrow();
        }
    }

    public static void main(String[] args) throws Exception {
        Map<String, String> opts = LoadOptions.parse(args, Set.of("nmt", "keep", "legacy-token-auto-create",
                "leader-elect"));
        int namespaces = Integer.parseInt(opts.getOrDefault("namespaces", "1000"));
        int idleSeconds = Integer.parseInt(opts.getOrDefault("idle", "120"));
        int settle = Integer.parseInt(opts.getOrDefault("settle", "10"));
        String controllers = opts.getOrDefault("controllers", "*");
        Set<String> selected = ControllerSelection.parse(controllers);
        boolean autoCreate = opts.containsKey("legacy-token-auto-create");
        boolean tokens = selected.contains(TokensController.NAME) && autoCreate;
        boolean leaderElect = opts.containsKey("leader-elect");
        boolean nmt = opts.containsKey("nmt");
        boolean keep = opts.containsKey("keep");
        ContainerJvm deployment = ContainerJvm.read(DEPLOYMENT, "controlplane");
        String javaOpts = opts.getOrDefault("java-opts", deployment.javaOpts())
                + (nmt ? " -XX:NativeMemoryTracking=summary" : "");
        Path jar = ControlplaneProcess.requireJar(ControlplaneProcess.JAR);
        say("machine: %d CPUs, %s, JDK %s; load average %s", Runtime.getRuntime().availableProcessors(),
                ProcStats.cpuModel(), System.getProperty("java.version"), ProcStats.loadAverage());
        say("jar %s (%s); controllers %s%s%s; JVM options: %s", jar, Files.getLastModifiedTime(jar), selected,
                autoCreate ? ", --legacy-token-auto-create" : "", leaderElect ? ", leader election" : "", javaOpts);

        Path work = Files.createTempDirectory("controlplane-idle");
        Process cp = null;
        List<String> rows = new ArrayList<>();
        try (KubeApiServer server = KubeApiServer.create().start()) {
            CoreV1Api core = new CoreV1Api(server.adminClient());
            double created = createNamespaces(core, namespaces);
            Set<String> all = core.listNamespace().execute().getItems().stream().map(ns -> ns.getMetadata().getName())
                    .collect(Collectors.toSet());
            say("created %,d namespaces in %.2f s (%.0f/s, %d threads); %,d in all", namespaces, created,
                    namespaces / created, CREATE_THREADS, all.size());

            Path kubeconfig = work.resolve("kubeconfig");
            server.writeKubeconfig(kubeconfig, server.adminToken());
            int port = ControlplaneProcess.freePort();
            List<String> command = new ArrayList<>(ControlplaneProcess.command(javaOpts, List.of(), jar, kubeconfig,
                    List.of("--controllers=" + controllers,
                            "--service-account-private-key-file", server.serviceAccountSigningKey().toString(),
                            "--root-ca-file", server.servingCertificate().toString(),
                            "--metrics-address", "127.0.0.1:" + port,
                            leaderElect ? "--leader-elect-namespace=kube-system" : "--leader-elect=false")));
            if (autoCreate) {
                command.add("--legacy-token-auto-create");
            }
            Path log = work.resolve("controlplane.log");
            long started = System.nanoTime();
            ProcessBuilder launch = new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(log.toFile());
            launch.environment().putAll(deployment.otherEnvironment()); // e.g. MALLOC_ARENA_MAX
            cp = launch.start();
            long pid = cp.pid();
            HttpClient http = HttpClient.newHttpClient();
            ControlplaneProcess.awaitReady(http, port, cp);
            if (leaderElect) { // a follower is ready at once; the leader once its caches have synced
                awaitLeading(http, port, cp);
                ControlplaneProcess.awaitReady(http, port, cp);
            }
            double ready = seconds(System.nanoTime() - started);
            double readyCpu = ProcStats.cpuSeconds(pid);
            long readyRss = ProcStats.statusKiB(pid, "VmRSS");
            say("control plane pid %d ready after %.2f s (CPU %.2f s, RSS %.1f MiB)", pid, ready, readyCpu,
                    readyRss / 1024.0);

            Coverage c = awaitConverged(core, all, selected, tokens, cp);
            double converged = seconds(System.nanoTime() - started);
            String coverage = coverage(c, selected, tokens, all.size());
            say("converged after %.2f s from the start (%.2f s after ready): %s; CPU %.2f s, RSS %.1f MiB", converged,
                    converged - ready, coverage, ProcStats.cpuSeconds(pid), ProcStats.statusKiB(pid, "VmRSS") / 1024.0);
            awaitEmptyQueues(http, port);
            say("work queues empty after %.2f s; settling %d s", seconds(System.nanoTime() - started), settle);
            Thread.sleep(settle * 1000L);

            Idle idle = idle(pid, http, port, idleSeconds);
            say("idle %.1f s: CPU %.2f s = %.2f millicores; RSS %.1f → %.1f MiB (max %.1f), VmHWM %.1f MiB; %s",
                    idle.last().seconds(), idle.cpuSeconds(), idle.millicores(), idle.first().rssKiB() / 1024.0,
                    idle.last().rssKiB() / 1024.0, idle.maxRssKiB() / 1024.0, idle.hwmKiB() / 1024.0, idle.rssSplit());
            say("idle CPU by thread (s): %s", idle.threadCpu());
            say("API requests during idle: %s; reconciles: %d; heap used at the end %.1f MiB",
                    idle.apiRequests().isEmpty() ? "none" : idle.apiRequests(), idle.reconciles(),
                    idle.heapBytes() / 1048576);
            String nativeMemory = nmt ? nativeMemory(pid) : null;
            if (nmt) {
                say("native memory at the end (jcmd %d VM.native_memory summary scale=MB, committed):%n%s", pid,
                        nativeMemory);
            }

            rows.add(row("namespaces: created by the driver (+ system) / time to create",
                    f("%,d (+%d) / %.2f s (%.0f/s)", namespaces, all.size() - namespaces, created, namespaces / created)));
            rows.add(row("ready (/readyz) after start / CPU / RSS",
                    f("%.2f s / %.2f s / %.1f MiB", ready, readyCpu, readyRss / 1024.0)));
            rows.add(row("converged after start", f("%.2f s (%s)", converged, coverage)));
            rows.add(row(f("**RSS** idle start / end / max of %d samples", idle.samples().size()),
                    f("**%.1f / %.1f / %.1f MiB**", idle.first().rssKiB() / 1024.0, idle.last().rssKiB() / 1024.0,
                            idle.maxRssKiB() / 1024.0)));
            rows.add(row("peak RSS since start (VmHWM); at the end", f("%.1f MiB; %s", idle.hwmKiB() / 1024.0,
                    idle.rssSplit())));
            rows.add(row("**CPU** over the idle window", f("**%.2f s in %.1f s = %.2f millicores**", idle.cpuSeconds(),
                    idle.last().seconds(), idle.millicores())));
            rows.add(row("idle CPU by thread (s)", idle.threadCpu()));
            rows.add(row("heap used at the end (jvm_memory_used_bytes)", f("%.1f MiB", idle.heapBytes() / 1048576)));
            rows.add(row("threads idle start / end", idle.first().threads() + " / " + idle.last().threads()));
            rows.add(row("API requests during idle (satoken_api_requests_total)",
                    idle.apiRequests().isEmpty() ? "none" : idle.apiRequests().toString()));
            rows.add(row("reconciles during idle", Long.toString(idle.reconciles())));
            rows.add(row(f("machine busy over the window (%d CPUs) / load average before → after",
                    Runtime.getRuntime().availableProcessors()),
                    f("%.1f %% / %s → %s", 100 * idle.machineBusy(), idle.loadBefore(), idle.loadAfter())));
            rows.add(row("JVM options", "`" + javaOpts + "`"));
            if (nmt) {
                rows.add(row("NMT total committed at the end", nativeMemory.lines().filter(l -> l.contains("Total"))
                        .findFirst().orElse("?").replaceAll(".*committed=(\\S+).*", "$1")));
            }

            say("%s", ControlplaneProcess.stop(cp, log));
        } finally {
            ControlplaneProcess.cleanUp(cp, work, keep);
            if (keep) {
                say("kept %s", work);
            }
        }
        say("");
        say("| | %,d namespaces, controllers %s%s, %d s idle |", namespaces, selected,
                autoCreate ? " with --legacy-token-auto-create" : "", idleSeconds);
        say("|---|---|");
        rows.forEach(r -> say("%s", r));
    }

    /**
     * The idle window: /proc reads only, at its start, every {@value #SAMPLE_SECONDS} s and at its end;
     * {@code /metrics} is scraped just before and just after it, so the scrapes' CPU is not counted.
     */
    static Idle idle(long pid, HttpClient http, int port, int seconds) throws Exception {
        Map<String, Double> apiBefore = ControlplaneProcess.apiRequests(http, port);
        double reconcilesBefore = reconciles(ControlplaneProcess.metrics(http, port));
        Map<String, Double> threadsBefore = ProcStats.threadCpuSeconds(pid);
        long[] machineBefore = ProcStats.machineTicks();
        String loadBefore = ProcStats.loadAverage();
        long from = System.nanoTime();
        List<Sample> samples = new ArrayList<>(List.of(sample(pid, 0)));
        for (int at = Math.min(SAMPLE_SECONDS, seconds); ; at = Math.min(at + SAMPLE_SECONDS, seconds)) {
            long wait = from + TimeUnit.SECONDS.toNanos(at) - System.nanoTime();
            if (wait > 0) {
                TimeUnit.NANOSECONDS.sleep(wait);
            }
            Sample s = sample(pid, seconds(System.nanoTime() - from));
            samples.add(s);
            say("  idle +%.0f s: RSS %.1f MiB, CPU %.2f s since the window began, %d threads", s.seconds(),
                    s.rssKiB() / 1024.0, s.cpuSeconds() - samples.get(0).cpuSeconds(), s.threads());
            if (at >= seconds) {
                break;
            }
        }
        long[] machineAfter = ProcStats.machineTicks();
        String loadAfter = ProcStats.loadAverage();
        Map<String, Double> threadsAfter = ProcStats.threadCpuSeconds(pid);
        long hwm = ProcStats.statusKiB(pid, "VmHWM");
        String split = rssSplit(pid);

        String scrape = ControlplaneProcess.metrics(http, port);
        Map<String, Long> api = ControlplaneProcess.moved(apiBefore, ControlplaneProcess.apiRequests(http, port));
        double busy = 1.0 - (double) (machineAfter[1] - machineBefore[1]) / (machineAfter[0] - machineBefore[0]);
        return new Idle(samples, api, Math.round(reconciles(scrape) - reconcilesBefore), busy, loadBefore, loadAfter,
                threadCpu(threadsBefore, threadsAfter), hwm, split, ControlplaneProcess.heap(http, port));
    }

    /** Creates {@code idle-0000}, {@code idle-0001}, ... on {@value #CREATE_THREADS} threads; returns the seconds. */
    static double createNamespaces(CoreV1Api core, int count) throws Exception {
        ExecutorService pool = Executors.newFixedThreadPool(CREATE_THREADS);
        long start = System.nanoTime();
        try {
            List<Future<?>> calls = new ArrayList<>();
            for (int i = 0; i < count; i++) {
                V1Namespace ns = new V1Namespace().metadata(new V1ObjectMeta().name(f("idle-%04d", i)));
                calls.add(pool.submit(() -> core.createNamespace(ns).execute()));
            }
            for (Future<?> call : calls) {
                call.get(); // the first failure, with its cause
            }
        } finally {
            pool.shutdownNow();
        }
        return seconds(System.nanoTime() - start);
    }

    /** Polls every 500 ms (at most 10 min) until the selected controllers cover every namespace. */
    static Coverage awaitConverged(CoreV1Api core, Set<String> namespaces, Set<String> selected, boolean tokens,
            Process cp) throws Exception {
        boolean accounts = selected.contains("serviceaccounts");
        boolean rootCa = selected.contains("root-ca");
        int n = namespaces.size();
        long deadline = System.nanoTime() + Duration.ofMinutes(10).toNanos();
        while (true) {
            if (!cp.isAlive()) {
                throw new IllegalStateException("control plane exited: " + cp.exitValue());
            }
            Coverage c = coverage(core, namespaces, accounts, rootCa, tokens);
            if ((!accounts || c.accounts() == n) && (!rootCa || c.rootCa() == n) && (!tokens || c.tokens() == n)) {
                return c;
            }
            if (System.nanoTime() > deadline) {
                throw new IllegalStateException("not converged after 10 min: of " + n + " namespaces, "
                        + coverage(c, selected, tokens, n));
            }
            Thread.sleep(500);
        }
    }

    /** One list call per kind asked for; counts only namespaces in {@code namespaces}. */
    static Coverage coverage(CoreV1Api core, Set<String> namespaces, boolean accounts, boolean rootCa, boolean tokens)
            throws ApiException {
        Set<String> withAccount = new HashSet<>();
        Set<String> withToken = new HashSet<>();
        if (accounts || tokens) {
            Map<String, Boolean> filled = new HashMap<>();
            if (tokens) {
                for (V1Secret s : core.listSecretForAllNamespaces().fieldSelector("type=" + Informers.TOKEN_SECRET_TYPE)
                        .execute().getItems()) {
                    byte[] token = s.getData() == null ? null : s.getData().get("token");
                    filled.put(s.getMetadata().getNamespace() + "/" + s.getMetadata().getName(),
                            token != null && token.length > 0);
                }
            }
            for (V1ServiceAccount sa : core.listServiceAccountForAllNamespaces().fieldSelector("metadata.name=default")
                    .execute().getItems()) {
                String ns = sa.getMetadata().getNamespace();
                withAccount.add(ns);
                if (sa.getSecrets() != null && sa.getSecrets().stream()
                        .anyMatch(r -> filled.getOrDefault(ns + "/" + r.getName(), false))) {
                    withToken.add(ns);
                }
            }
        }
        Set<String> withRootCa = new HashSet<>();
        if (rootCa) {
            core.listConfigMapForAllNamespaces().fieldSelector("metadata.name=" + Informers.ROOT_CA_CONFIGMAP).execute()
                    .getItems().forEach(cm -> withRootCa.add(cm.getMetadata().getNamespace()));
        }
        withAccount.retainAll(namespaces);
        withRootCa.retainAll(namespaces);
        withToken.retainAll(namespaces);
        return new Coverage(withAccount.size(), withRootCa.size(), withToken.size());
    }

    static String coverage(Coverage c, Set<String> selected, boolean tokens, int n) {
        List<String> parts = new ArrayList<>();
        if (selected.contains("serviceaccounts")) {
            parts.add(f("SA default %,d/%,d", c.accounts(), n));
        }
        if (selected.contains("root-ca")) {
            parts.add(f("%s %,d/%,d", Informers.ROOT_CA_CONFIGMAP, c.rootCa(), n));
        }
        if (tokens) {
            parts.add(f("default's filled token Secret %,d/%,d", c.tokens(), n));
        }
        return parts.isEmpty() ? "nothing to check" : String.join(", ", parts);
    }

    /** Waits (at most 2 min) until every controller's satoken_controller_queue_depth is 0. */
    static void awaitEmptyQueues(HttpClient http, int port) throws Exception {
        for (int i = 0; i < 1200; i++) {
            boolean empty = ControlplaneProcess.metrics(http, port).lines()
                    .filter(l -> l.startsWith("satoken_controller_queue_depth{"))
                    .allMatch(l -> Double.parseDouble(l.substring(l.lastIndexOf(' ') + 1)) == 0);
            if (empty) {
                return;
            }
            Thread.sleep(100);
        }
        throw new IllegalStateException("work queues not empty after 2 min");
    }

    /** Waits (at most 1 min) until satoken_controlplane_leader is 1: this process holds the Lease. */
    static void awaitLeading(HttpClient http, int port, Process cp) throws Exception {
        for (int i = 0; i < 600; i++) {
            if (!cp.isAlive()) {
                throw new IllegalStateException("control plane exited: " + cp.exitValue());
            }
            if (ControlplaneProcess.metrics(http, port).lines()
                    .anyMatch(l -> l.matches("satoken_controlplane_leader(\\{\\})? 1(\\.0)?"))) {
                return;
            }
            Thread.sleep(100);
        }
        throw new IllegalStateException("not leading after 1 min");
    }

    /** Reconcile calls so far, all controllers and results (the reconcile timer's counts). */
    static double reconciles(String scrape) {
        return scrape.lines().filter(l -> l.startsWith("satoken_controller_reconcile_seconds_count{"))
                .mapToDouble(l -> Double.parseDouble(l.substring(l.lastIndexOf(' ') + 1))).sum();
    }

    static Sample sample(long pid, double seconds) throws IOException {
        return new Sample(seconds, ProcStats.statusKiB(pid, "VmRSS"), ProcStats.cpuSeconds(pid), ProcStats.threads(pid));
    }

    static String rssSplit(long pid) throws IOException {
        return ProcStats.statusMiB(pid, "RssAnon", "RssFile");
    }

    /** Threads (by name) that used at least one clock tick between the two readings, most first. */
    static String threadCpu(Map<String, Double> before, Map<String, Double> after) {
        String busy = ProcStats.busiestThreads(before, after, Integer.MAX_VALUE);
        return busy.isEmpty() ? "none" : busy;
    }

    /** The committed lines of {@code jcmd PID VM.native_memory summary scale=MB}. */
    static String nativeMemory(long pid) throws IOException, InterruptedException {
        return NativeMemory.committed(pid).stream().map(l -> "  " + l.replaceFirst("^-\\s+", ""))
                .collect(Collectors.joining("\n"));
    }

    private static String row(String what, String value) {
        return "| " + what + " | " + value + " |";
    }

    private static String f(String format, Object... args) {
        return String.format(Locale.ROOT, format, args);
    }

    private static double seconds(long nanos) {
        return nanos / 1e9;
    }

    private static void say(String format, Object... args) {
        System.out.println(String.format(Locale.ROOT, format, args));
    }
}
