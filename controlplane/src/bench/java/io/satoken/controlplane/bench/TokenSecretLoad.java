package io.satoken.controlplane.bench;

import io.kubernetes.client.openapi.ApiException;
import io.kubernetes.client.openapi.apis.CoreV1Api;
import io.kubernetes.client.openapi.models.V1ObjectMeta;
import io.kubernetes.client.openapi.models.V1Secret;
import io.kubernetes.client.openapi.models.V1ServiceAccount;
import io.satoken.common.testing.KubeApiServer;
import io.satoken.common.testing.LoadOptions;
import java.net.http.HttpClient;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
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
        Path jar = ControlplaneProcess.requireJar(ControlplaneProcess.JAR);
        try (KubeApiServer server = KubeApiServer.create().start()) {
            Path work = Files.createTempDirectory("token-load");
            Path kubeconfig = work.resolve("kubeconfig");
            server.writeKubeconfig(kubeconfig, server.adminToken());
            CoreV1Api core = new CoreV1Api(server.adminClient());
            int port = ControlplaneProcess.freePort();
            List<String> command = ControlplaneProcess.command(javaOpts, List.of(), jar, kubeconfig, List.of(
                    "--controllers=tokens,serviceaccounts", "--legacy-token-auto-create", "--leader-elect=false",
                    "--service-account-private-key-file", server.serviceAccountSigningKey().toString(),
                    "--root-ca-file", server.servingCertificate().toString(),
                    "--metrics-address=127.0.0.1:" + port));
            Process cp = new ProcessBuilder(command).redirectErrorStream(true)
                    .redirectOutput(work.resolve("controlplane.log").toFile()).start();
            HttpClient http = HttpClient.newHttpClient();
            ControlplaneProcess.awaitReady(http, port, cp, "satoken_controller_queue_depth");
            Map<String, Double> before = ControlplaneProcess.apiRequests(http, port);

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
                peakHeap = Math.max(peakHeap, ControlplaneProcess.heap(http, port));
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
            peakHeap = Math.max(peakHeap, ControlplaneProcess.heap(http, port));
            Map<String, Double> after = ControlplaneProcess.apiRequests(http, port);
            String status = Files.readString(Path.of("/proc", String.valueOf(cp.pid()), "status"));
            String hwm = status.lines().filter(l -> l.startsWith("VmHWM")).findFirst().orElse("VmHWM: ?");
            cp.destroy();
            cp.waitFor(10, TimeUnit.SECONDS);

            System.out.printf("accounts: %d (+%d default) in %d namespaces%n", accounts, namespaces, namespaces);
            System.out.printf("created all accounts in %d ms; every one had a filled, referenced token Secret after"
                    + " %d ms (from the first create)%n", (created - start) / 1_000_000, (done - start) / 1_000_000);
            Map<String, Long> delta = ControlplaneProcess.moved(before, after);
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
}
