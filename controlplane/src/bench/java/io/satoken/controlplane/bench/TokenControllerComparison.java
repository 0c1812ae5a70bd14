package io.satoken.controlplane.bench;

import io.kubernetes.client.openapi.ApiException;
import io.kubernetes.client.openapi.apis.CoreV1Api;
import io.kubernetes.client.openapi.models.V1ObjectMeta;
import io.kubernetes.client.openapi.models.V1Secret;
import io.kubernetes.client.openapi.models.V1ServiceAccount;
import io.satoken.common.testing.KubeApiServer;
import io.satoken.common.testing.LoadOptions;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

/**
 * Our legacy tokens controller beside kube-controller-manager's {@code serviceaccount-token} controller, at the
 * same client limits (BENCHMARKS.md, "Legacy token Secrets: ours and kube-controller-manager's"). Each side gets
 * a fresh kube-apiserver + etcd (the test harness's {@code KubeApiServer}) holding N ServiceAccounts across M
 * namespaces; then the controller starts and, once it has filled a probe Secret, the driver creates one token
 * Secret ({@code kubernetes.io/service-account-token}, annotated with its account) per account, 4 at a time,
 * and polls (one list every 200 ms) until every one holds a token. kube-controller-manager v1.26 no longer
 * creates token Secrets for ServiceAccounts (LegacyServiceAccountTokenNoAutoGeneration is locked on), so the
 * work both sides share is this one: filling the Secrets a user creates.
 *
 * <p>Measured: the time from the first Secret create until all are filled, and the controller's requests over
 * it from the API server's own {@code apiserver_request_total} for secrets and serviceaccounts by verb, less
 * the driver's own (its POSTs and LISTs of Secrets, counted by the driver). Both sides run with
 * {@code --kube-api-qps=Q --kube-api-burst=B} and 5 workers. Run from the repository root:
 *
 * <pre>
 * mvn -B -ntp -pl controlplane -am -DskipTests package
 * mvn -B -ntp -pl controlplane -am -Pbench test-compile exec:exec \
 *   -Dbench.main=io.satoken.controlplane.bench.TokenControllerComparison -Dbench.args="--accounts 2000"
 * </pre>
 *
 * Options: {@code --side ours|upstream|both} (both), {@code --accounts N} (2000), {@code --namespaces M} (20),
 * {@code --qps Q} (20), {@code --burst B} (30). Token values never reach the output: only whether one is there.
 */
public final class TokenControllerComparison {

    private final int accounts;
    private final int namespaces;
    private final String qps;
    private final String burst;

    private TokenControllerComparison(Map<String, String> opts) {
        accounts = Integer.parseInt(opts.getOrDefault("accounts", "2000"));
        namespaces = Integer.parseInt(opts.getOrDefault("namespaces", "20"));
        qps = opts.getOrDefault("qps", "20");
        burst = opts.getOrDefault("burst", "30");
    }

    public static void main(String[] args) throws Exception {
        Map<String, String> opts = LoadOptions.parse(args, Set.of());
        String side = opts.getOrDefault("side", "both");
        TokenControllerComparison run = new TokenControllerComparison(opts);
        List<String> results = new ArrayList<>();
        for (String s : side.equals("both") ? List.of("ours", "upstream") : List.of(side)) {
            results.add(run.side(s));
        }
        System.out.println();
        results.forEach(System.out::println);
    }

    private String side(String side) throws Exception {
        try (KubeApiServer server = KubeApiServer.create().start()) {
            Path work = Files.createTempDirectory("token-controllers-" + side);
            Path kubeconfig = work.resolve("kubeconfig");
            server.writeKubeconfig(kubeconfig, server.adminToken());
            CoreV1Api core = new CoreV1Api(server.adminClient());
            List<String> names = new ArrayList<>();
            ExecutorService pool = Executors.newFixedThreadPool(4);
            List<Future<?>> created = new ArrayList<>();
            for (int n = 0; n < namespaces; n++) {
                String ns = server.createNamespace("load" + n);
                for (int i = n; i < accounts; i += namespaces) {
                    String name = "sa-" + i;
                    names.add(ns + "/" + name);
                    created.add(pool.submit(() -> core.createNamespacedServiceAccount(ns, new V1ServiceAccount()
                            .metadata(new V1ObjectMeta().name(name).namespace(ns))).execute()));
                }
            }
            for (Future<?> f : created) {
                f.get();
            }
            Path log = work.resolve(side + ".log");
            Process controller = start(side, server, kubeconfig, log);
            try {
                // ready once it fills a probe Secret: its informers have synced
                String probeNs = server.createNamespace("probe");
                server.createServiceAccount(probeNs, "probe");
                core.createNamespacedSecret(probeNs, secret("probe", "probe")).execute();
                long deadline = System.nanoTime() + TimeUnit.MINUTES.toNanos(2);
                while (!filled(core.readNamespacedSecret("probe-token", probeNs).execute())) {
                    if (!controller.isAlive() || System.nanoTime() > deadline) {
                        throw new IllegalStateException(side + " did not fill the probe Secret; log " + log);
                    }
                    Thread.sleep(100);
                }
                Map<String, Double> before = requests(server);
                long start = System.nanoTime();
                created.clear();
                for (String account : names) {
                    String[] parts = account.split("/");
                    created.add(pool.submit(() -> core.createNamespacedSecret(parts[0], secret(parts[1], parts[1]))
                            .execute()));
                }
                for (Future<?> f : created) {
                    f.get();
                }
                long allCreated = System.nanoTime();
                int polls = 0;
                long done;
                while (true) {
                    polls++;
                    if (filledSecrets(core) >= accounts) {
                        done = System.nanoTime();
                        break;
                    }
                    if (System.nanoTime() - start > Duration.ofMinutes(20).toNanos()) {
                        throw new IllegalStateException(side + ": not all filled after 20 min; log " + log);
                    }
                    Thread.sleep(200);
                }
                Map<String, Double> after = requests(server);
                Map<String, Long> controllerRequests = new TreeMap<>();
                after.forEach((k, v) -> controllerRequests.put(k, Math.round(v - before.getOrDefault(k, 0.0))));
                // the driver's own: one POST per Secret, one LIST of Secrets per poll
                controllerRequests.merge("secrets POST", (long) -accounts, Long::sum);
                controllerRequests.merge("secrets LIST", (long) -polls, Long::sum);
                controllerRequests.values().removeIf(v -> v == 0);
                long total = controllerRequests.values().stream().mapToLong(Long::longValue).sum();
                return String.format("%s (qps %s, burst %s): %d Secrets created in %.1f s; all filled %.1f s after the"
                        + " first create; controller requests %d (%.2f per Secret) %s; log %s", side, qps, burst,
                        accounts, (allCreated - start) / 1e9, (done - start) / 1e9, total, (double) total / accounts,
                        controllerRequests, log);
            } finally {
                controller.destroy();
                controller.waitFor(10, TimeUnit.SECONDS);
                pool.shutdownNow();
            }
        }
    }

    private Process start(String side, KubeApiServer server, Path kubeconfig, Path log) throws Exception {
        List<String> command;
        if (side.equals("ours")) {
            command = ControlplaneProcess.command("-XX:MaxRAM=512m -XX:MaxRAMPercentage=75", List.of(),
                    ControlplaneProcess.requireJar(ControlplaneProcess.JAR), kubeconfig, List.of(
                            "--controllers=tokens", "--leader-elect=false", "--concurrent-syncs=5",
                            "--kube-api-qps=" + qps, "--kube-api-burst=" + burst,
                            "--service-account-private-key-file", server.serviceAccountSigningKey().toString(),
                            "--root-ca-file", server.servingCertificate().toString(),
                            "--metrics-address=127.0.0.1:" + ControlplaneProcess.freePort()));
        } else {
            command = List.of(KubeApiServer.assetsDir().resolve("kube-controller-manager").toString(),
                    "--controllers=serviceaccount-token", "--kubeconfig=" + kubeconfig, "--leader-elect=false",
                    "--use-service-account-credentials=false", "--secure-port=0",
                    "--concurrent-serviceaccount-token-syncs=5", "--kube-api-qps=" + qps, "--kube-api-burst=" + burst,
                    "--service-account-private-key-file=" + server.serviceAccountSigningKey(),
                    "--root-ca-file=" + server.servingCertificate());
        }
        System.out.println(side + ": " + String.join(" ", command));
        return new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(log.toFile()).start();
    }

    static V1Secret secret(String account, String prefix) {
        return new V1Secret().type("kubernetes.io/service-account-token").metadata(new V1ObjectMeta()
                .name(prefix + "-token").annotations(Map.of("kubernetes.io/service-account.name", account)));
    }

    static boolean filled(V1Secret s) {
        byte[] token = s.getData() == null ? null : s.getData().get("token");
        return token != null && token.length > 0;
    }

    static long filledSecrets(CoreV1Api core) throws ApiException {
        return core.listSecretForAllNamespaces().fieldSelector("type=kubernetes.io/service-account-token").execute()
                .getItems().stream().filter(s -> s.getMetadata().getNamespace().startsWith("load"))
                .filter(TokenControllerComparison::filled).count();
    }

    /** The API server's apiserver_request_total for secrets and serviceaccounts, by "resource VERB". */
    static Map<String, Double> requests(KubeApiServer server) throws IOException {
        String body = server.metricsText();
        Map<String, Double> counts = new TreeMap<>();
        for (String line : body.split("\n")) {
            if (line.startsWith("apiserver_request_total{") && (line.contains("resource=\"secrets\"")
                    || line.contains("resource=\"serviceaccounts\"")) && line.contains("subresource=\"\"")) {
                String key = line.replaceAll(".*resource=\"([a-z]+)\".*", "$1") + " "
                        + line.replaceAll(".*verb=\"([A-Z]+)\".*", "$1");
                counts.merge(key, Double.parseDouble(line.substring(line.lastIndexOf(' ') + 1)), Double::sum);
            }
        }
        return counts;
    }
}
