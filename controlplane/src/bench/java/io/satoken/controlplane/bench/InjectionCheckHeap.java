package io.satoken.controlplane.bench;

import io.kubernetes.client.openapi.apis.CoreV1Api;
import io.kubernetes.client.openapi.models.V1Container;
import io.kubernetes.client.openapi.models.V1EnvVar;
import io.kubernetes.client.openapi.models.V1Namespace;
import io.kubernetes.client.openapi.models.V1ObjectMeta;
import io.kubernetes.client.openapi.models.V1Pod;
import io.kubernetes.client.openapi.models.V1PodSpec;
import io.satoken.common.testing.ContainerJvm;
import io.satoken.common.testing.KubeApiServer;
import io.satoken.common.testing.LoadOptions;
import io.satoken.common.testing.ProcStats;
import io.satoken.common.testing.PrometheusText;
import java.net.http.HttpClient;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

/**
 * What the injection check's pod cache costs the controllers' leader: its heap after a full GC once it has cached
 * {@code --pods} large pods, every one asking for tokens without the webhook's volume (so each is also counted and
 * given its Event).
 *
 * <ol>
 *   <li>starts a real kube-apiserver + etcd, creates {@code --namespaces} namespaces and {@code --pods} pods spread
 *       over them, each with the {@code satoken.io/projections} annotation and two containers whose environment
 *       makes the pod about {@code --pod-kib} KiB of JSON (pods stay Pending: no scheduler runs);</li>
 *   <li>starts the control plane from {@code --jar} (default the module's shaded jar) with only
 *       {@code --controllers=injection-check}, the Deployment's JVM options, and a client limit high enough that
 *       the Events do not pace the run ({@code --kube-api-qps=1000});</li>
 *   <li>waits until {@code satoken_pods_missing_injection} counts every pod and the work queues are empty, runs a
 *       full GC ({@code jcmd PID GC.run}) and reads the heap in use and the RSS.</li>
 * </ol>
 *
 * <pre>
 * mvn -B -q -o -DskipTests install
 * mvn -B -q -o -pl controlplane -Pbench test-compile exec:exec \
 *   -Dbench.main=io.satoken.controlplane.bench.InjectionCheckHeap -Dbench.args="--pods 10000 --pod-kib 8"
 * </pre>
 */
public final class InjectionCheckHeap {

    private static final int CREATE_THREADS = 8;

    private InjectionCheckHeap() {
    }

    public static void main(String[] args) throws Exception {
        Map<String, String> opts = LoadOptions.parse(args, Set.of("keep"));
        int pods = Integer.parseInt(opts.getOrDefault("pods", "10000"));
        int namespaces = Integer.parseInt(opts.getOrDefault("namespaces", "100"));
        int podKiB = Integer.parseInt(opts.getOrDefault("pod-kib", "8"));
        Path jar = ControlplaneProcess.requireJar(Path.of(opts.getOrDefault("jar",
                ControlplaneProcess.JAR.toString())));
        String javaOpts = opts.getOrDefault("java-opts",
                ContainerJvm.read(ControlplaneIdle.DEPLOYMENT, "controlplane").javaOpts());
        say("machine: %d CPUs, %s, JDK %s; jar %s (%s); JVM options: %s", Runtime.getRuntime().availableProcessors(),
                ProcStats.cpuModel(), System.getProperty("java.version"), jar, Files.getLastModifiedTime(jar),
                javaOpts);
        Path work = Files.createTempDirectory("injection-check-heap");
        Process cp = null;
        try (KubeApiServer server = KubeApiServer.create().start()) {
            CoreV1Api core = new CoreV1Api(server.adminClient());
            long start = System.nanoTime();
            create(core, namespaces, pods, podKiB);
            int size = new CoreV1Api(server.adminClient()).readNamespacedPod("pod-00000", "heap-000").execute()
                    .toString().length();
            say("created %,d namespaces and %,d pods in %.1f s (one pod's model, as text: %,d chars)", namespaces,
                    pods, seconds(System.nanoTime() - start), size);

            Path kubeconfig = work.resolve("kubeconfig");
            server.writeKubeconfig(kubeconfig, server.adminToken());
            int port = ControlplaneProcess.freePort();
            Path log = work.resolve("controlplane.log");
            cp = new ProcessBuilder(ControlplaneProcess.command(javaOpts, List.of(), jar, kubeconfig, List.of(
                    "--controllers=injection-check", "--leader-elect=false", "--kube-api-qps=1000",
                    "--kube-api-burst=1000", "--metrics-address", "127.0.0.1:" + port)))
                    .redirectErrorStream(true).redirectOutput(log.toFile()).start();
            HttpClient http = HttpClient.newHttpClient();
            long launched = System.nanoTime();
            ControlplaneProcess.awaitReady(http, port, cp);
            long deadline = System.nanoTime() + Duration.ofMinutes(15).toNanos();
            double missing;
            while ((missing = PrometheusText.value(ControlplaneProcess.metrics(http, port),
                    "satoken_pods_missing_injection")) < pods) {
                if (!cp.isAlive() || System.nanoTime() > deadline) {
                    throw new IllegalStateException("the check counted " + missing + " of " + pods + " pods; "
                            + ControlplaneProcess.logWarnings(log));
                }
                Thread.sleep(500);
            }
            say("every pod counted after %.1f s", seconds(System.nanoTime() - launched));
            ControlplaneIdle.awaitEmptyQueues(http, port);
            jcmd(cp.pid(), "GC.run");
            Thread.sleep(2000); // the metrics' memory pools are read at scrape time; let the collection settle
            List<String> histogram = jcmd(cp.pid(), "GC.class_histogram").lines().limit(15).toList();
            say("what the heap holds (jcmd %d GC.class_histogram, top):%n%s", cp.pid(), String.join("\n", histogram));
            double heap = ControlplaneProcess.heap(http, port);
            long rss = ProcStats.statusKiB(cp.pid(), "VmRSS");
            say("| pods | pod JSON | heap in use after a full GC | RSS |");
            say("|---|---|---|---|");
            say("| %,d | ~%d KiB | %.1f MiB | %.1f MiB |", pods, podKiB, heap / 1048576, rss / 1024.0);
            say("%s", ControlplaneProcess.stop(cp, log));
        } finally {
            ControlplaneProcess.cleanUp(cp, work, opts.containsKey("keep"));
        }
    }

    /** Namespaces {@code heap-NNN}, then pods {@code pod-NNNNN} round-robin over them. */
    private static void create(CoreV1Api core, int namespaces, int pods, int podKiB) throws Exception {
        ExecutorService pool = Executors.newFixedThreadPool(CREATE_THREADS);
        try {
            List<Future<?>> calls = new ArrayList<>();
            for (int i = 0; i < namespaces; i++) {
                String name = String.format(Locale.ROOT, "heap-%03d", i);
                calls.add(pool.submit(() -> core.createNamespace(new V1Namespace()
                        .metadata(new V1ObjectMeta().name(name))).execute()));
            }
            await(calls);
            for (int i = 0; i < pods; i++) {
                V1Pod pod = pod(String.format(Locale.ROOT, "pod-%05d", i), podKiB);
                String namespace = String.format(Locale.ROOT, "heap-%03d", i % namespaces);
                calls.add(pool.submit(() -> core.createNamespacedPod(namespace, pod).execute()));
            }
            await(calls);
        } finally {
            pool.shutdownNow();
        }
    }

    /** A pod asking for tokens, without the webhook's volume, with about {@code kib} KiB of environment. */
    private static V1Pod pod(String name, int kib) {
        List<V1EnvVar> env = new ArrayList<>();
        String value = "v".repeat(100);
        for (int i = 0; i * 130 < kib * 1024 / 2; i++) {
            env.add(new V1EnvVar().name(String.format(Locale.ROOT, "SETTING_%03d", i)).value(value));
        }
        return new V1Pod().metadata(new V1ObjectMeta().name(name).putLabelsItem("app", "web")
                        .putAnnotationsItem("satoken.io/projections", "[{path: token, audience: vault}]"))
                .spec(new V1PodSpec().overhead(null) // the model's default {} is refused without a RuntimeClass
                        .addContainersItem(new V1Container().name("app").image("registry.example/app:1").env(env))
                        .addContainersItem(new V1Container().name("sidecar").image("registry.example/sidecar:1")
                                .env(env)));
    }

    private static String jcmd(long pid, String command) throws Exception {
        Process p = new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "jcmd").toString(),
                Long.toString(pid), command).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes(), java.nio.charset.StandardCharsets.UTF_8);
        if (p.waitFor() != 0) {
            throw new IllegalStateException("jcmd " + pid + " " + command + ": " + out);
        }
        return out;
    }

    private static void await(List<Future<?>> calls) throws Exception {
        for (Future<?> call : calls) {
            call.get();
        }
        calls.clear();
    }

    private static double seconds(long nanos) {
        return nanos / 1e9;
    }

    private static void say(String format, Object... args) {
        System.out.println(String.format(Locale.ROOT, format, args));
        System.out.flush();
    }
}
