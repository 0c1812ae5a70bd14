package io.satoken.controlplane.bench;

import io.kubernetes.client.openapi.ApiClient;
import io.kubernetes.client.openapi.ApiException;
import io.kubernetes.client.openapi.apis.CoreV1Api;
import io.kubernetes.client.openapi.models.V1ObjectMeta;
import io.kubernetes.client.openapi.models.V1Secret;
import io.kubernetes.client.openapi.models.V1ServiceAccount;
import io.satoken.common.testing.KubeApiServer;
import io.satoken.common.testing.LoadOptions;
import java.io.IOException;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;

/**
 * The token-Secret load test (BENCHMARKS.md, "Legacy token Secrets"): a real kube-apiserver + etcd, the
 * control plane as a separate process from its jar with {@code --controllers=tokens,serviceaccounts
 * --legacy-token-auto-create}, then N ServiceAccounts created across M namespaces. It measures the time from
 * the first create until every account lists a token Secret whose {@code token} is filled, the API
 * requests the control plane made (its own {@code satoken_api_requests_total}), and its peak heap
 * (sampled from /metrics) and peak RSS ({@code VmHWM}). Run from the controlplane module after
 * {@code mvn -B -q -o -DskipTests install}:
 *
 * <pre>
 * mvn -B -q -o -pl controlplane -Pbench test-compile exec:exec \
 *   -Dbench.main=io.satoken.controlplane.bench.TokenSecretLoad -Dbench.args="--accounts 2000 --namespaces 20"
 * </pre>
 *
 * Token values are never read into the driver's output: only whether {@code token} is non-empty.
 */
public final class TokenSecretLoad {

    public static void main(String[] args) throws Exception {
        Map<String, String> opts = LoadOptions.parse(args, Set.of());
        int accounts = Integer.parseInt(opts.getOrDefault("accounts", "2000"));
        int namespaces = Integer.parseInt(opts.getOrDefault("namespaces", "20"));
        String javaOpts = opts.getOrDefault("java-opts", "-XX:MaxRAM=512m -XX:MaxRAMPercentage=75");
        Path jar = Path.of("target", "satoken-controlplane.jar");
        if (!Files.isRegularFile(jar)) {
            throw new IllegalStateException(jar.toAbsolutePath() + " missing: run mvn -B -q -o -DskipTests install first");
        }
        try (KubeApiServer server = KubeApiServer.create().start()) {
            Path work = Files.createTempDirectory("token-load");
            Path kubeconfig = work.resolve("kubeconfig");
            server.writeKubeconfig(kubeconfig, server.adminToken());
            CoreV1Api core = new CoreV1Api(server.adminClient());
            int port;
            try (ServerSocket s = new ServerSocket(0)) {
                port = s.getLocalPort();
            }
            List<String> command = new java.util.ArrayList<>(List.of(
                    Path.of(System.getProperty("java.home"), "bin", "java").toString()));
            command.addAll(List.of(javaOpts.split(" ")));
            command.addAll(List.of("-jar", jar.toString(), "run", "--kubeconfig", kubeconfig.toString(),
                    "--controllers=tokens,serviceaccounts", "--legacy-token-auto-create", "--leader-elect=false",
                    "--service-account-private-key-file", server.serviceAccountSigningKey().toString(),
                    "--root-ca-file", server.servingCertificate().toString(),
                    "--metrics-address=127.0.0.1:" + port));
            Process cp = new ProcessBuilder(command).redirectErrorStream(true)
                    .redirectOutput(work.resolve("controlplane.log").toFile()).start();
            HttpClient http = HttpClient.newHttpClient();
            awaitReady(http, port, cp);
            Map<String, Double> before = requests(http, port);

            long start = System.nanoTime();
            ExecutorService pool = Executors.newFixedThreadPool(4);
            for (int n = 0; n < namespaces; n++) {
                String ns = server.createNamespace("load" + n);
                for (int i = n; i < accounts; i += namespaces) {
                    String name = "sa-" + i;
                    pool.submit(() -> {
                        core.createNamespacedServiceAccount(ns, new V1ServiceAccount()
                                .metadata(new V1ObjectMeta().name(name).namespace(ns))).execute();
                        return null;
                    });
                }
            }
            pool.shutdown();
            pool.awaitTermination(5, TimeUnit.MINUTES);
            long created = System.nanoTime();

            double peakHeap = 0;
            long filled;
            while (true) {
                peakHeap = Math.max(peakHeap, heap(http, port));
                filled = filledAccounts(core, accounts + namespaces);
                if (filled >= accounts + namespaces) {
                    break;
                }
                if (System.nanoTime() - start > Duration.ofMinutes(10).toNanos()) {
                    throw new IllegalStateException("only " + filled + " accounts filled after 10 min");
                }
                Thread.sleep(200);
            }
            long done = System.nanoTime();
            peakHeap = Math.max(peakHeap, heap(http, port));
            Map<String, Double> after = requests(http, port);
            String status = Files.readString(Path.of("/proc", String.valueOf(cp.pid()), "status"));
            String hwm = status.lines().filter(l -> l.startsWith("VmHWM")).findFirst().orElse("VmHWM: ?");
            cp.destroy();
            cp.waitFor(10, TimeUnit.SECONDS);

            System.out.printf("accounts: %d (+%d default) in %d namespaces%n", accounts, namespaces, namespaces);
            System.out.printf("created all accounts in %d ms; every one had a filled, referenced token Secret after"
                    + " %d ms (from the first create)%n", (created - start) / 1_000_000, (done - start) / 1_000_000);
            Map<String, Long> delta = new TreeMap<>();
            after.forEach((k, v) -> delta.put(k, Math.round(v - before.getOrDefault(k, 0.0))));
            delta.values().removeIf(v -> v == 0);
            System.out.printf("control plane API requests during the run: %d total %s%n",
                    delta.values().stream().mapToLong(Long::longValue).sum(), delta);
            System.out.printf("control plane peak heap used (sampled every 200 ms): %.1f MiB; peak RSS %s%n",
                    peakHeap / 1048576, hwm.replaceAll("\\s+", " "));
            System.out.printf("log: %s%n", work.resolve("controlplane.log"));
        }
    }

    /** Accounts that list a Secret of theirs that holds a token; counted with two list calls. */
    static long filledAccounts(CoreV1Api core, int expected) throws ApiException {
        Map<String, Boolean> tokenFilled = new HashMap<>();
        for (V1Secret s : core.listSecretForAllNamespaces().fieldSelector("type=kubernetes.io/service-account-token")
                .execute().getItems()) {
            byte[] token = s.getData() == null ? null : s.getData().get("token");
            tokenFilled.put(s.getMetadata().getNamespace() + "/" + s.getMetadata().getName(), token != null && token.length > 0);
        }
        return core.listServiceAccountForAllNamespaces().execute().getItems().stream()
                .filter(sa -> sa.getMetadata().getNamespace().startsWith("load"))
                .filter(sa -> sa.getSecrets() != null && sa.getSecrets().stream().anyMatch(r ->
                        tokenFilled.getOrDefault(sa.getMetadata().getNamespace() + "/" + r.getName(), false)))
                .count();
    }

    static void awaitReady(HttpClient http, int port, Process p) throws Exception {
        for (int i = 0; i < 300; i++) {
            if (!p.isAlive()) {
                throw new IllegalStateException("control plane exited: " + p.exitValue());
            }
            try {
                if (http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/readyz")).build(),
                        HttpResponse.BodyHandlers.ofString()).statusCode() == 200
                        && metrics(http, port).contains("satoken_controller_queue_depth")) {
                    return;
                }
            } catch (IOException notYet) {
                // not listening yet
            }
            Thread.sleep(100);
        }
        throw new IllegalStateException("control plane not ready after 30 s");
    }

    static String metrics(HttpClient http, int port) throws IOException, InterruptedException {
        return http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/metrics")).build(),
                HttpResponse.BodyHandlers.ofString()).body();
    }

    static Map<String, Double> requests(HttpClient http, int port) throws IOException, InterruptedException {
        Map<String, Double> out = new TreeMap<>();
        metrics(http, port).lines().filter(l -> l.startsWith("satoken_api_requests_total{")).forEach(l -> {
            String verb = l.replaceAll(".*verb=\"([A-Z]+)\".*", "$1");
            String code = l.replaceAll(".*code=\"([^\"]+)\".*", "$1");
            out.merge(verb + " " + code, Double.parseDouble(l.substring(l.lastIndexOf(' ') + 1)), Double::sum);
        });
        return out;
    }

    static double heap(HttpClient http, int port) throws IOException, InterruptedException {
        return metrics(http, port).lines()
                .filter(l -> l.startsWith("jvm_memory_used_bytes{") && l.contains("area=\"heap\""))
                .mapToDouble(l -> Double.parseDouble(l.substring(l.lastIndexOf(' ') + 1))).sum();
    }
}
