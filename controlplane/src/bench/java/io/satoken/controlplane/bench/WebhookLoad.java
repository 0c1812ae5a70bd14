package io.satoken.controlplane.bench;

import com.google.gson.JsonArray;
import com.google.gson.JsonElement;
import com.google.gson.JsonObject;
import com.google.gson.JsonParser;
import io.satoken.common.testing.KubeApiServer;
import io.satoken.common.testing.LoadOptions;
import io.satoken.common.testing.ProcStats;
import java.io.IOException;
import java.io.StringWriter;
import java.math.BigInteger;
import java.net.http.HttpClient;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyPair;
import java.security.KeyPairGenerator;
import java.security.spec.ECGenParameterSpec;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Base64;
import java.util.Date;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.bouncycastle.asn1.x500.X500Name;
import org.bouncycastle.asn1.x509.BasicConstraints;
import org.bouncycastle.asn1.x509.ExtendedKeyUsage;
import org.bouncycastle.asn1.x509.Extension;
import org.bouncycastle.asn1.x509.GeneralName;
import org.bouncycastle.asn1.x509.GeneralNames;
import org.bouncycastle.asn1.x509.KeyPurposeId;
import org.bouncycastle.asn1.x509.KeyUsage;
import org.bouncycastle.cert.jcajce.JcaX509CertificateConverter;
import org.bouncycastle.cert.jcajce.JcaX509v3CertificateBuilder;
import org.bouncycastle.openssl.jcajce.JcaPEMWriter;
import org.bouncycastle.openssl.jcajce.JcaPKCS8Generator;
import org.bouncycastle.operator.jcajce.JcaContentSignerBuilder;

/**
 * The admission webhook latency test (BENCHMARKS.md, "Admission webhook latency"): {@code /mutate/pods}
 * over TLS on loopback at fixed request rates, driven by a real load generator with keep-alive.
 *
 * <ol>
 * <li>starts a real kube-apiserver + etcd, creates a namespace and its {@code default} ServiceAccount (so
 *     the webhook finds the account in its informer cache, the usual path), and a self-signed serving
 *     certificate for 127.0.0.1 (BouncyCastle, RSA 2048 or EC P-256) in a temp dir;</li>
 * <li>starts the control plane as its own process from the shaded jar: {@code run --controllers=-*
 *     --leader-elect=false --webhook-address 127.0.0.1:P --tls-cert-file .. --tls-private-key-file ..
 *     --agent-service-account=satoken-system/satoken-agent}
 *     with the Deployment's JVM options ({@code MaxRAM} standing in for its 512Mi limit), the serial
 *     collector (the one the JVM picks by itself in a 512Mi container; on this 24 GiB machine it would
 *     pick G1) and a GC log, and waits for {@code /readyz};</li>
 * <li>writes an AdmissionReview v1 CREATE of a Deployment's pod: an init container and two containers
 *     with env, ports, resources, mounts and probes, the {@code satoken.io/projections} annotation and
 *     a (trimmed) managedFields entry as a ReplicaSet controller's pod carries; sends it once with {@code curl -k} and
 *     checks the answer (200, {@code allowed: true}, the uid, a JSONPatch);</li>
 * <li>for each rate: a warm-up run of the load generator at that rate (not recorded), then the measured
 *     run; it reads every request's latency from the tool's per-request output and reports the rate
 *     achieved, p50 / p99 / p99.9 / max, the webhook's own count of patched reviews (which must equal the
 *     200s), its CPU (utime + stime, also by thread) and RSS, its GC pauses and how many of the requests
 *     slower than 2 ms were in flight during one (h2load only: its log has absolute times), the load
 *     generator's CPU, the machine's busy share and load average.</li>
 * </ol>
 *
 * <pre>
 * mvn -B -q -o -DskipTests install
 * mvn -B -q -o -pl controlplane -Pbench test-compile exec:exec \
 *   -Dbench.main=io.satoken.controlplane.bench.WebhookLoad -Dbench.args="--rates 200,500,1000 --runs 2"
 * </pre>
 *
 * Options: {@code --tool h2load|hey} (default h2load: {@code nghttp2-client}; hey: {@code hey}),
 * {@code --rates 200,500,1000}, {@code --connections 10} (each rate is split evenly over them),
 * {@code --duration 30} and {@code --warmup 10} (seconds), {@code --runs 1} (the whole sweep, repeated),
 * {@code --path /mutate/pods} (another path measures TLS + HTTP alone: the server answers 404 without
 * a review), {@code --key rsa|ec}, {@code --java-opts "..."} (default {@value #DEFAULT_JAVA_OPTS}),
 * {@code --keep} (keep the temp dir: review, tool outputs, control plane and GC logs).
 */
public final class WebhookLoad {

    static final String DEFAULT_JAVA_OPTS = "-XX:MaxRAM=512m -XX:MaxRAMPercentage=75 -XX:+ExitOnOutOfMemoryError -XX:+UseSerialGC";
    /** The GC log's timemillis decoration: when the line was logged, ms since the epoch. */
    private static final Pattern LOGGED_AT = Pattern.compile("\\[(\\d+)ms\\]");

    /** One measured run's figures. */
    record Result(int run, int rateAsked, double rateAchieved, int count, int errors, Map<String, Integer> statuses,
            double p50, double p99, double p999, double max, double mean, int slowerThanInterval,
            double webhookCpu, double toolCpu, double machineBusy, long rssKiB, String gc, String loadBefore,
            String loadAfter, Map<String, Double> threads, String serverSide, long reviewed, String gcOverlap) {
    }

    public static void main(String[] args) throws Exception {
        Map<String, String> opts = LoadOptions.parse(args, Set.of("keep"));
        String tool = opts.getOrDefault("tool", "h2load");
        if (!tool.equals("h2load") && !tool.equals("hey")) {
            throw new IllegalArgumentException("--tool must be h2load or hey");
        }
        List<Integer> rates = Arrays.stream(opts.getOrDefault("rates", "200,500,1000").split(","))
                .map(String::strip).map(Integer::parseInt).toList();
        int connections = Integer.parseInt(opts.getOrDefault("connections", "10"));
        for (int rate : rates) {
            if (rate % connections != 0) {
                throw new IllegalArgumentException("rate " + rate + " is not a multiple of --connections " + connections);
            }
        }
        int duration = Integer.parseInt(opts.getOrDefault("duration", "30"));
        int warmup = Integer.parseInt(opts.getOrDefault("warmup", "10"));
        int runs = Integer.parseInt(opts.getOrDefault("runs", "1"));
        String path = opts.getOrDefault("path", "/mutate/pods");
        boolean review = path.equals("/mutate/pods");
        String key = opts.getOrDefault("key", "rsa");
        String javaOpts = opts.getOrDefault("java-opts", DEFAULT_JAVA_OPTS);
        boolean keep = opts.containsKey("keep");
        // --jar: another build's jar, to measure before and after a change with the same driver
        Path jar = ControlplaneProcess.requireJar(Path.of(opts.getOrDefault("jar", ControlplaneProcess.JAR.toString())));

        say("machine: %d CPUs, %s, JDK %s; %s", Runtime.getRuntime().availableProcessors(), ProcStats.cpuModel(),
                System.getProperty("java.version"), toolVersion(tool));
        Path work = Files.createTempDirectory("webhook-load");
        List<Result> results = new ArrayList<>();
        Process cp = null;
        try (KubeApiServer server = KubeApiServer.create().start()) {
            Path kubeconfig = work.resolve("kubeconfig");
            server.writeKubeconfig(kubeconfig, server.adminToken());
            String namespace = server.createNamespace("bench");
            server.createServiceAccount(namespace, "default");
            Path cert = work.resolve("tls.crt");
            Path privateKey = work.resolve("tls.key");
            writeServingCertificate(cert, privateKey, key);
            int webhookPort = ControlplaneProcess.freePort();
            int metricsPort = ControlplaneProcess.freePort();
            List<String> command = ControlplaneProcess.command(javaOpts,
                    List.of("-Xlog:gc:file=" + work.resolve("gc.log") + ":uptime,timemillis"), jar, kubeconfig, List.of(
                    "--controllers=-*", "--leader-elect=false",
                    "--webhook-address", "127.0.0.1:" + webhookPort,
                    "--tls-cert-file", cert.toString(), "--tls-private-key-file", privateKey.toString(),
                    "--agent-service-account=satoken-system/satoken-agent",
                    "--metrics-address", "127.0.0.1:" + metricsPort));
            Path log = work.resolve("controlplane.log");
            long started = System.nanoTime();
            cp = new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(log.toFile()).start();
            HttpClient http = HttpClient.newHttpClient();
            ControlplaneProcess.awaitReady(http, metricsPort, cp);
            say("control plane pid %d ready after %.2f s (CPU %.2f s, RSS %d MiB); JVM options: %s",
                    cp.pid(), (System.nanoTime() - started) / 1e9, ProcStats.cpuSeconds(cp.pid()),
                    ProcStats.statusKiB(cp.pid(), "VmRSS") / 1024, javaOpts);

            Path body = work.resolve("review.json");
            String uid = UUID.randomUUID().toString();
            Files.writeString(body, admissionReview(uid, namespace));
            say("request: AdmissionReview CREATE pod, %d bytes, namespace %s", Files.size(body), namespace);
            String url = "https://127.0.0.1:" + webhookPort + path;
            if (review) {
                checkOneAnswer(url, body, uid, work);
            }
            Map<String, Double> apiBefore = ControlplaneProcess.apiRequests(http, metricsPort);

            for (int run = 1; run <= runs; run++) {
                for (int rate : rates) {
                    say("run %d, %d req/s: warm-up %d s", run, rate, warmup);
                    load(tool, url, body, rate, connections, warmup, work.resolve("warmup.out"));
                    Result r = measure(run, tool, url, body, rate, connections, duration, cp.pid(), http, metricsPort,
                            path, work);
                    results.add(r);
                    print(r, connections);
                }
            }
            Map<String, Double> apiAfter = ControlplaneProcess.apiRequests(http, metricsPort);
            Map<String, Long> apiDelta = ControlplaneProcess.moved(apiBefore, apiAfter);
            say("control plane API requests during the load: %s", apiDelta.isEmpty() ? "none" : apiDelta);
            long pid = cp.pid();
            say("control plane at the end: CPU %.2f s, RSS %d MiB, peak RSS %d MiB", ProcStats.cpuSeconds(pid),
                    ProcStats.statusKiB(pid, "VmRSS") / 1024, ProcStats.statusKiB(pid, "VmHWM") / 1024);
            say("%s", ControlplaneProcess.stop(cp, log));
        } finally {
            ControlplaneProcess.cleanUp(cp, work, keep);
            if (keep) {
                say("kept %s", work);
            }
        }
        table(results, tool, connections, duration, path);
    }

    // --- one run ---

    static Result measure(int run, String tool, String url, Path body, int rate, int connections, int duration,
            long pid, HttpClient http, int metricsPort, String path, Path work) throws Exception {
        Path out = work.resolve("run" + run + "-" + rate + ".out");
        String loadBefore = ProcStats.loadAverage();
        Map<String, Double> webhookBefore = webhookMetrics(http, metricsPort);
        Map<String, Double> threadsBefore = ProcStats.threadCpuSeconds(pid);
        int gcBefore = gcPauses(work).size();
        long[] machineBefore = ProcStats.machineTicks();
        double cpuBefore = ProcStats.cpuSeconds(pid);
        double toolCpu = load(tool, url, body, rate, connections, duration, out);
        double cpuAfter = ProcStats.cpuSeconds(pid);
        long[] machineAfter = ProcStats.machineTicks();
        Map<String, Double> threadsAfter = ProcStats.threadCpuSeconds(pid);
        Map<String, Double> webhookAfter = webhookMetrics(http, metricsPort);
        String loadAfter = ProcStats.loadAverage();
        List<double[]> pauses = gcPauses(work);
        pauses = pauses.subList(gcBefore, pauses.size());

        List<long[]> samples = tool.equals("h2load") ? h2loadLog(work.resolve(out.getFileName() + ".log")) : heyCsv(out);
        if (samples.isEmpty()) {
            throw new IllegalStateException(tool + " recorded no response; see " + out);
        }
        Map<String, Integer> statuses = new TreeMap<>();
        double[] ok = samples.stream().filter(s -> {
            statuses.merge(String.valueOf(s[1]), 1, Integer::sum);
            return s[1] == (path.equals("/mutate/pods") ? 200 : 404);
        }).mapToDouble(s -> s[2] / 1000.0).sorted().toArray();
        int errors = samples.size() - ok.length + (tool.equals("h2load") ? h2loadFailed(out) : 0);
        double intervalMs = 1000.0 * connections / rate;
        int slower = (int) Arrays.stream(ok).filter(ms -> ms > intervalMs).count();
        long reviewed = Math.round(webhookAfter.getOrDefault("count " + path, 0.0)
                - webhookBefore.getOrDefault("count " + path, 0.0));
        if (path.equals("/mutate/pods")) {
            long patched = Math.round(webhookAfter.getOrDefault(path + " patched", 0.0)
                    - webhookBefore.getOrDefault(path + " patched", 0.0));
            if (patched != reviewed || patched < ok.length) {
                say("  !! the webhook counted %d reviews, %d patched, for %d 200s", reviewed, patched, ok.length);
            }
        }
        Map<String, Double> threads = new TreeMap<>();
        threadsAfter.forEach((name, v) -> {
            double d = v - threadsBefore.getOrDefault(name, 0.0);
            if (d >= 0.05) {
                threads.put(name, d);
            }
        });
        double busy = 1.0 - (double) (machineAfter[1] - machineBefore[1]) / (machineAfter[0] - machineBefore[0]);
        return new Result(run, rate, samples.size() / (double) duration, ok.length, errors, statuses,
                quantile(ok, 0.50), quantile(ok, 0.99), quantile(ok, 0.999), ok.length == 0 ? Double.NaN : ok[ok.length - 1],
                Arrays.stream(ok).average().orElse(Double.NaN), slower, cpuAfter - cpuBefore, toolCpu, busy,
                ProcStats.statusKiB(pid, "VmRSS"), gcSummary(pauses), loadBefore, loadAfter, threads,
                serverSide(webhookBefore, webhookAfter, path), reviewed,
                tool.equals("h2load") ? gcOverlap(samples, pauses, 2.0) : "n/a (hey's times are relative)");
    }

    /**
     * Runs the load generator at {@code rate} requests/s over {@code connections} keep-alive connections for
     * {@code seconds}; returns its CPU seconds (the shell's {@code times} for its child).
     */
    static double load(String tool, String url, Path body, int rate, int connections, int seconds, Path out)
            throws IOException, InterruptedException {
        int perConnection = rate / connections;
        List<String> args;
        if (tool.equals("h2load")) {
            // HTTP/1.1 (the webhook offers no h2), one request in flight per connection, --rps per connection
            args = List.of("h2load", "--h1", "-t", "1", "-c", String.valueOf(connections), "-m", "1",
                    "--rps", String.valueOf(perConnection), "-D", String.valueOf(seconds),
                    "-d", body.toString(), "-H", "Content-Type: application/json",
                    "--log-file", out + ".log", url);
        } else {
            // -host: hey 0.1.4 sends the Host header, port included, as the TLS server name (SNI), and the JDK
            // refuses "127.0.0.1:PORT" as one (illegal_parameter); "localhost" is a valid name. Its CSV lists
            // only requests that got a response: errors show as a lower achieved rate.
            args = List.of("hey", "-z", seconds + "s", "-c", String.valueOf(connections), "-q",
                    String.valueOf(perConnection), "-host", "localhost", "-m", "POST", "-T", "application/json",
                    "-D", body.toString(), "-o", "csv", url);
        }
        Path times = Path.of(out + ".times");
        List<String> command = new ArrayList<>(List.of("sh", "-c",
                "\"$0\" \"$@\"; rc=$?; times > '" + times + "'; exit $rc"));
        command.addAll(args);
        Process p = new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(out.toFile()).start();
        if (!p.waitFor(seconds + 60L, TimeUnit.SECONDS)) {
            p.destroyForcibly();
            throw new IllegalStateException(args.get(0) + " did not finish; see " + out);
        }
        if (p.exitValue() != 0) {
            throw new IllegalStateException(args.get(0) + " exited with " + p.exitValue() + ": "
                    + Files.readString(out).lines().limit(20).toList());
        }
        // dash's times: the shell's user and system time, then its children's ("0m1.230000s 0m0.450000s")
        List<String> lines = Files.readAllLines(times);
        double cpu = 0;
        for (String t : lines.get(lines.size() - 1).strip().split("\\s+")) {
            String[] ms = t.replace("s", "").split("m");
            cpu += Integer.parseInt(ms[0]) * 60 + Double.parseDouble(ms[1]);
        }
        return cpu;
    }

    /** h2load's --log-file: start (µs since epoch), status, µs until the end of the response. */
    static List<long[]> h2loadLog(Path log) throws IOException {
        List<long[]> rows = new ArrayList<>();
        for (String line : Files.readAllLines(log)) {
            String[] f = line.split("\t");
            if (f.length >= 3) {
                rows.add(new long[] {Long.parseLong(f[0]), Long.parseLong(f[1]), Long.parseLong(f[2])});
            }
        }
        return rows;
    }

    /** Failed, errored and timed-out requests from h2load's summary ("requests: N total, ..."). */
    static int h2loadFailed(Path out) throws IOException {
        for (String line : Files.readAllLines(out)) {
            if (line.startsWith("requests:")) {
                int failed = 0;
                for (String part : line.substring("requests:".length()).split(",")) {
                    String[] nw = part.strip().split(" ");
                    if (nw[1].equals("errored") || nw[1].equals("timeout")) {
                        failed += Integer.parseInt(nw[0]);
                    }
                }
                return failed;
            }
        }
        throw new IllegalStateException("no summary in " + out);
    }

    /**
     * hey's -o csv: response-time (s, 4 decimals), DNS+dialup, DNS, Request-write, Response-delay,
     * Response-read, status-code, offset (s since the start). As (offset µs, status, latency µs).
     */
    static List<long[]> heyCsv(Path out) throws IOException {
        List<long[]> rows = new ArrayList<>();
        for (String line : Files.readAllLines(out)) {
            String[] f = line.split(",");
            if (f.length >= 8 && !f[0].startsWith("response-time")) {
                rows.add(new long[] {Math.round(Double.parseDouble(f[7]) * 1e6), Long.parseLong(f[6].strip()),
                        Math.round(Double.parseDouble(f[0]) * 1e6)});
            }
        }
        return rows;
    }

    /** Nearest rank. */
    static double quantile(double[] sorted, double q) {
        if (sorted.length == 0) {
            return Double.NaN;
        }
        int rank = (int) Math.ceil(q * sorted.length);
        return sorted[Math.max(0, Math.min(sorted.length - 1, rank - 1))];
    }

    // --- the request ---

    /**
     * An AdmissionReview v1 as kube-apiserver sends it for a pod a ReplicaSet creates: an init container
     * and two containers (the application and a proxy sidecar), the annotation that asks the agent for two
     * tokens, the managedFields the controller's create carries, and the tolerations built-in admission
     * added before the webhooks run. No serviceAccountName (the webhook sets {@code default}), no uid yet.
     */
    public static String admissionReview(String uid, String namespace) {
        String pod = """
                {"kind":"Pod","apiVersion":"v1","metadata":{"generateName":"orders-api-7d9c8b6f5d-","namespace":"@NS@",
                "creationTimestamp":null,"labels":{"app.kubernetes.io/name":"orders-api","app.kubernetes.io/instance":
                "orders-api-prod","app.kubernetes.io/version":"2.14.3","app.kubernetes.io/component":"api",
                "pod-template-hash":"7d9c8b6f5d"},"annotations":{"prometheus.io/scrape":"true","prometheus.io/port":
                "9090","kubectl.kubernetes.io/restartedAt":"2026-11-20T08:12:44Z","satoken.io/projections":
                "- path: vault/token\\n  audience: vault\\n  expirationSeconds: 3600\\n- path: sts/token\\n  audience: sts\\n"},
                "ownerReferences":[{"apiVersion":"apps/v1","kind":"ReplicaSet","name":"orders-api-7d9c8b6f5d",
                "uid":"5c1e9a4e-3d0b-4b6a-9f1e-0c8f2d7a6b31","controller":true,"blockOwnerDeletion":true}],
                "managedFields":[{"manager":"kube-controller-manager","operation":"Update","apiVersion":"v1",
                "time":"2026-11-20T08:12:45Z","fieldsType":"FieldsV1","fieldsV1":{"f:metadata":{"f:annotations":
                {".":{},"f:kubectl.kubernetes.io/restartedAt":{},"f:prometheus.io/port":{},"f:prometheus.io/scrape":{},
                "f:satoken.io/projections":{}},"f:generateName":{},"f:labels":{".":{},"f:app.kubernetes.io/component":{},
                "f:app.kubernetes.io/instance":{},"f:app.kubernetes.io/name":{},"f:app.kubernetes.io/version":{},
                "f:pod-template-hash":{}},"f:ownerReferences":{".":{},"k:{\\"uid\\":\\"5c1e9a4e-3d0b-4b6a-9f1e-0c8f2d7a6b31\\"}":{}}},
                "f:spec":{"f:containers":{},"f:initContainers":{},"f:securityContext":{},"f:volumes":{}}}}]},
                "spec":{"volumes":[{"name":"config","configMap":{"name":"orders-api-config","defaultMode":420}},
                {"name":"cache","emptyDir":{"sizeLimit":"256Mi"}},{"name":"proxy-config","configMap":
                {"name":"orders-api-proxy","defaultMode":420}}],
                "initContainers":[{"name":"migrate","image":"registry.example.com/orders/api:2.14.3","command":
                ["/app/orders-api","migrate","--database-url=$(DATABASE_URL)"],"env":[{"name":"DATABASE_URL",
                "valueFrom":{"secretKeyRef":{"name":"orders-db","key":"url"}}}],"resources":{"limits":{"cpu":"500m",
                "memory":"256Mi"},"requests":{"cpu":"100m","memory":"128Mi"}},"volumeMounts":[{"name":"config",
                "readOnly":true,"mountPath":"/etc/orders"}],"terminationMessagePath":"/dev/termination-log",
                "terminationMessagePolicy":"File","imagePullPolicy":"IfNotPresent"}],
                "containers":[{"name":"api","image":"registry.example.com/orders/api:2.14.3","args":["serve",
                "--config=/etc/orders/config.yaml"],"ports":[{"name":"http","containerPort":8080,"protocol":"TCP"},
                {"name":"metrics","containerPort":9090,"protocol":"TCP"}],"env":[{"name":"POD_NAME","valueFrom":
                {"fieldRef":{"apiVersion":"v1","fieldPath":"metadata.name"}}},{"name":"POD_NAMESPACE","valueFrom":
                {"fieldRef":{"apiVersion":"v1","fieldPath":"metadata.namespace"}}},{"name":"DATABASE_URL","valueFrom":
                {"secretKeyRef":{"name":"orders-db","key":"url"}}},{"name":"VAULT_ADDR","value":
                "https://vault.vault.svc:8200"},{"name":"JAVA_TOOL_OPTIONS","value":"-XX:MaxRAMPercentage=75"}],
                "resources":{"limits":{"memory":"1Gi"},"requests":{"cpu":"500m","memory":"768Mi"}},
                "volumeMounts":[{"name":"config","readOnly":true,"mountPath":"/etc/orders"},{"name":"cache",
                "mountPath":"/var/cache/orders"}],"livenessProbe":{"httpGet":{"path":"/healthz","port":"http",
                "scheme":"HTTP"},"initialDelaySeconds":10,"timeoutSeconds":1,"periodSeconds":10,"successThreshold":1,
                "failureThreshold":3},"readinessProbe":{"httpGet":{"path":"/ready","port":"http","scheme":"HTTP"},
                "timeoutSeconds":1,"periodSeconds":5,"successThreshold":1,"failureThreshold":3},
                "terminationMessagePath":"/dev/termination-log","terminationMessagePolicy":"File",
                "imagePullPolicy":"IfNotPresent","securityContext":{"allowPrivilegeEscalation":false,
                "readOnlyRootFilesystem":true,"capabilities":{"drop":["ALL"]}}},
                {"name":"proxy","image":"registry.example.com/mesh/proxy:1.29.1","args":["proxy","--config",
                "/etc/proxy/envoy.yaml","--log-level","warn"],"ports":[{"name":"proxy","containerPort":15001,
                "protocol":"TCP"},{"name":"proxy-admin","containerPort":15000,"protocol":"TCP"}],"resources":{"limits":
                {"cpu":"1","memory":"256Mi"},"requests":{"cpu":"50m","memory":"64Mi"}},"volumeMounts":[{"name":
                "proxy-config","readOnly":true,"mountPath":"/etc/proxy"}],"readinessProbe":{"tcpSocket":{"port":15001},
                "timeoutSeconds":1,"periodSeconds":10,"successThreshold":1,"failureThreshold":3},
                "terminationMessagePath":"/dev/termination-log","terminationMessagePolicy":"File",
                "imagePullPolicy":"IfNotPresent","securityContext":{"runAsUser":1337,"runAsNonRoot":true}}],
                "restartPolicy":"Always","terminationGracePeriodSeconds":30,"dnsPolicy":"ClusterFirst",
                "securityContext":{"runAsNonRoot":true,"fsGroup":2000,"seccompProfile":{"type":"RuntimeDefault"}},
                "schedulerName":"default-scheduler",
                "tolerations":[{"key":"node.kubernetes.io/not-ready","operator":"Exists","effect":"NoExecute",
                "tolerationSeconds":300},{"key":"node.kubernetes.io/unreachable","operator":"Exists",
                "effect":"NoExecute","tolerationSeconds":300}],"priority":0,"enableServiceLinks":true,
                "preemptionPolicy":"PreemptLowerPriority"},"status":{}}
                """.replace("\n", "").replace("@NS@", namespace);
        String request = """
                {"kind":"AdmissionReview","apiVersion":"admission.k8s.io/v1","request":{"uid":"@UID@",
                "kind":{"group":"","version":"v1","kind":"Pod"},"resource":{"group":"","version":"v1","resource":"pods"},
                "requestKind":{"group":"","version":"v1","kind":"Pod"},"requestResource":{"group":"","version":"v1",
                "resource":"pods"},"namespace":"@NS@","operation":"CREATE","userInfo":{"username":
                "system:serviceaccount:kube-system:replicaset-controller","uid":"0f5f8d3e-6a58-4c1b-8f5e-9b1c2d3e4f50",
                "groups":["system:serviceaccounts","system:serviceaccounts:kube-system","system:authenticated"]},
                "object":@POD@,"oldObject":null,"dryRun":false,"options":{"kind":"CreateOptions",
                "apiVersion":"meta.k8s.io/v1","fieldManager":"kube-controller-manager"}}}
                """.replace("\n", "").replace("@UID@", uid).replace("@NS@", namespace);
        String review = request.replace("@POD@", pod);
        JsonParser.parseString(review); // well-formed
        return review;
    }

    /** Sends the review once with curl and checks the answer; prints the patch's operations (op and path). */
    static void checkOneAnswer(String url, Path body, String uid, Path work) throws Exception {
        Path answer = work.resolve("answer.json");
        Process p = new ProcessBuilder("curl", "-sS", "-k", "-o", answer.toString(), "-w", "%{http_code}",
                "-H", "Content-Type: application/json", "--data-binary", "@" + body, url)
                .redirectErrorStream(true).start();
        String code = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8).strip();
        p.waitFor();
        JsonObject response = JsonParser.parseString(Files.readString(answer)).getAsJsonObject()
                .getAsJsonObject("response");
        if (!code.equals("200") || !response.get("allowed").getAsBoolean() || !uid.equals(response.get("uid").getAsString())
                || !"JSONPatch".equals(response.get("patchType").getAsString())) {
            throw new IllegalStateException("unexpected answer " + code + ": " + Files.readString(answer));
        }
        JsonArray patch = JsonParser.parseString(new String(Base64.getDecoder().decode(
                response.get("patch").getAsString()), StandardCharsets.UTF_8)).getAsJsonArray();
        List<String> ops = new ArrayList<>();
        for (JsonElement op : patch) {
            ops.add(op.getAsJsonObject().get("op").getAsString() + " " + op.getAsJsonObject().get("path").getAsString());
        }
        say("curl -k: HTTP %s, allowed, uid matches, %d-byte answer, JSONPatch of %d operations: %s", code,
                Files.size(answer), patch.size(), ops);
    }

    // --- the serving certificate ---

    static void writeServingCertificate(Path certFile, Path keyFile, String key) throws Exception {
        KeyPairGenerator generator;
        String algorithm;
        if (key.equals("ec")) {
            generator = KeyPairGenerator.getInstance("EC");
            generator.initialize(new ECGenParameterSpec("secp256r1"));
            algorithm = "SHA256withECDSA";
        } else {
            generator = KeyPairGenerator.getInstance("RSA");
            generator.initialize(2048);
            algorithm = "SHA256withRSA";
        }
        KeyPair pair = generator.generateKeyPair();
        X500Name name = new X500Name("CN=satoken-webhook-bench");
        Instant now = Instant.now();
        JcaX509v3CertificateBuilder builder = new JcaX509v3CertificateBuilder(name, BigInteger.valueOf(now.toEpochMilli()),
                Date.from(now.minus(Duration.ofHours(1))), Date.from(now.plus(Duration.ofDays(1))), name, pair.getPublic());
        builder.addExtension(Extension.basicConstraints, true, new BasicConstraints(false));
        builder.addExtension(Extension.keyUsage, true, new KeyUsage(KeyUsage.digitalSignature | KeyUsage.keyEncipherment));
        builder.addExtension(Extension.extendedKeyUsage, false, new ExtendedKeyUsage(KeyPurposeId.id_kp_serverAuth));
        builder.addExtension(Extension.subjectAlternativeName, false, new GeneralNames(new GeneralName[] {
                new GeneralName(GeneralName.iPAddress, "127.0.0.1"), new GeneralName(GeneralName.dNSName, "localhost")}));
        var certificate = new JcaX509CertificateConverter().getCertificate(
                builder.build(new JcaContentSignerBuilder(algorithm).build(pair.getPrivate())));
        Files.writeString(certFile, pem(certificate));
        Files.writeString(keyFile, pem(new JcaPKCS8Generator(pair.getPrivate(), null)));
    }

    private static String pem(Object object) throws IOException {
        StringWriter out = new StringWriter();
        try (JcaPEMWriter writer = new JcaPEMWriter(out)) {
            writer.writeObject(object);
        }
        return out.toString();
    }

    // --- the control plane ---

    /**
     * The webhook's counters: "PATH RESULT" from satoken_webhook_requests_total, "count PATH" and "sum PATH"
     * of the duration histogram, and "le PATH BOUND" for its cumulative buckets.
     */
    static Map<String, Double> webhookMetrics(HttpClient http, int port) throws IOException, InterruptedException {
        Map<String, Double> out = new LinkedHashMap<>();
        for (String l : ControlplaneProcess.metrics(http, port).lines().toList()) {
            double value = l.startsWith("#") ? 0 : Double.parseDouble(l.substring(l.lastIndexOf(' ') + 1));
            String path = l.replaceAll(".*path=\"([^\"]*)\".*", "$1");
            if (l.startsWith("satoken_webhook_requests_total{")) {
                out.merge(path + " " + l.replaceAll(".*result=\"([^\"]*)\".*", "$1"), value, Double::sum);
            } else if (l.startsWith("satoken_webhook_request_duration_seconds_count{")) {
                out.put("count " + path, value);
            } else if (l.startsWith("satoken_webhook_request_duration_seconds_sum{")) {
                out.put("sum " + path, value);
            } else if (l.startsWith("satoken_webhook_request_duration_seconds_bucket{")) {
                out.put("le " + path + " " + l.replaceAll(".*le=\"([^\"]*)\".*", "$1"), value);
            }
        }
        return out;
    }

    /**
     * The webhook's own time from a complete request to its answer (its histogram, over the run): mean, and the
     * upper bounds of the buckets holding p50 and p99 ("other" for paths without a route).
     */
    static String serverSide(Map<String, Double> before, Map<String, Double> after, String path) {
        if (!path.equals("/mutate/pods")) {
            return "n/a (no review)";
        }
        String key = path;
        double count = after.getOrDefault("count " + key, 0.0) - before.getOrDefault("count " + key, 0.0);
        if (count <= 0) {
            return "no samples";
        }
        double sum = after.getOrDefault("sum " + key, 0.0) - before.getOrDefault("sum " + key, 0.0);
        String prefix = "le " + key + " ";
        List<double[]> buckets = new ArrayList<>();
        after.forEach((k, v) -> {
            if (k.startsWith(prefix)) {
                String le = k.substring(prefix.length());
                buckets.add(new double[] {le.equals("+Inf") ? Double.POSITIVE_INFINITY : Double.parseDouble(le),
                        v - before.getOrDefault(k, 0.0)});
            }
        });
        buckets.sort((a, b) -> Double.compare(a[0], b[0]));
        return String.format(Locale.ROOT, "mean %.3f ms, p50 ≤ %s, p99 ≤ %s", 1000 * sum / count,
                bucketBound(buckets, count * 0.50), bucketBound(buckets, count * 0.99));
    }

    private static String bucketBound(List<double[]> buckets, double rank) {
        for (double[] b : buckets) {
            if (b[1] >= rank) {
                return Double.isInfinite(b[0]) ? "+Inf" : String.format(Locale.ROOT, "%.3f ms", b[0] * 1000);
            }
        }
        return "?";
    }

    /** The GC log's pauses, in order: {when it was logged (ms since the epoch; the pause's end), pause ms}. */
    static List<double[]> gcPauses(Path work) throws IOException {
        Path log = work.resolve("gc.log");
        if (!Files.exists(log)) {
            return List.of();
        }
        List<double[]> pauses = new ArrayList<>();
        for (String l : Files.readAllLines(log)) {
            if (l.contains("Pause") && l.endsWith("ms")) {
                Matcher m = LOGGED_AT.matcher(l);
                pauses.add(new double[] {m.find() ? Double.parseDouble(m.group(1)) : Double.NaN,
                        Double.parseDouble(l.substring(l.lastIndexOf(' ') + 1, l.length() - 2))});
            }
        }
        return pauses;
    }

    static String gcSummary(List<double[]> pauses) {
        if (pauses.isEmpty()) {
            return "0";
        }
        return String.format(Locale.ROOT, "%d, max %.2f ms, total %.1f ms", pauses.size(),
                pauses.stream().mapToDouble(p -> p[1]).max().orElse(0), pauses.stream().mapToDouble(p -> p[1]).sum());
    }

    /**
     * Of the requests that took longer than {@code thresholdMs}, and of all requests: how many were in flight
     * during a GC pause (the log's time has 1 ms resolution, so each pause is widened by 1 ms on both sides).
     * Needs absolute start times (h2load's log); {@code samples} are (start µs since the epoch, status, µs).
     */
    static String gcOverlap(List<long[]> samples, List<double[]> pauses, double thresholdMs) {
        if (pauses.isEmpty() || Double.isNaN(pauses.get(0)[0])) {
            return "n/a";
        }
        double[][] windows = pauses.stream().map(p -> new double[] {p[0] - p[1] - 1, p[0] + 1})
                .sorted((a, b) -> Double.compare(a[0], b[0])).toArray(double[][]::new);
        int slow = 0;
        int slowInPause = 0;
        int inPause = 0;
        for (long[] s : samples) {
            double from = s[0] / 1000.0;
            double to = (s[0] + s[2]) / 1000.0;
            boolean overlaps = false;
            int i = lowerBound(windows, from - 1000);
            for (; i < windows.length && windows[i][0] <= to; i++) {
                if (windows[i][1] >= from) {
                    overlaps = true;
                    break;
                }
            }
            if (overlaps) {
                inPause++;
            }
            if (s[2] / 1000.0 > thresholdMs) {
                slow++;
                if (overlaps) {
                    slowInPause++;
                }
            }
        }
        return String.format(Locale.ROOT, "%d of %d requests over %.0f ms overlapped a GC pause (of all requests: %.1f %%)",
                slowInPause, slow, thresholdMs, 100.0 * inPause / Math.max(1, samples.size()));
    }

    private static int lowerBound(double[][] windows, double from) {
        int lo = 0;
        int hi = windows.length;
        while (lo < hi) {
            int mid = (lo + hi) >>> 1;
            if (windows[mid][0] < from) {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        return lo;
    }

    // --- the load generator ---

    static String toolVersion(String tool) throws IOException, InterruptedException {
        List<String> command = tool.equals("h2load") ? List.of("h2load", "--version")
                : List.of("dpkg-query", "-W", "-f", "hey ${Version}", "hey");
        Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8).strip();
        p.waitFor();
        return out;
    }

    // --- output ---

    static void print(Result r, int connections) {
        say("  asked %d req/s, achieved %.1f req/s; %d ok, %d errors %s; latency ms p50 %.3f p99 %.3f p99.9 %.3f max %.3f"
                        + " mean %.3f; %d slower than the per-connection interval (%.0f ms)",
                r.rateAsked(), r.rateAchieved(), r.count(), r.errors(), r.statuses(), r.p50(), r.p99(), r.p999(), r.max(),
                r.mean(), r.slowerThanInterval(), 1000.0 * connections / r.rateAsked());
        say("  webhook: reviewed %d, its own time %s; CPU %.2f s (%.1f %% of a core), RSS %d MiB, GC pauses %s",
                r.reviewed(), r.serverSide(), r.webhookCpu(), 100 * r.webhookCpu() / (r.count() / r.rateAchieved()),
                r.rssKiB() / 1024, r.gc());
        say("  GC: %s", r.gcOverlap());
        say("  webhook CPU by thread: %s", r.threads().entrySet().stream()
                .map(e -> String.format(Locale.ROOT, "%s %.2f", e.getKey(), e.getValue())).toList());
        say("  load generator CPU %.2f s; machine busy %.0f %% of 2 CPUs; load average %s -> %s", r.toolCpu(),
                100 * r.machineBusy(), r.loadBefore(), r.loadAfter());
    }

    static void table(List<Result> results, String tool, int connections, int duration, String path) {
        say("");
        say("%s, %d keep-alive connections, %d s per rate, %s", tool, connections, duration, path);
        say("| run | asked (req/s) | achieved (req/s) | requests | errors | p50 (ms) | p99 (ms) | p99.9 (ms) | max (ms)"
                + " | webhook CPU (s / %% of a core) | RSS (MiB) | GC pauses | load avg before → after |");
        say("|---|---|---|---|---|---|---|---|---|---|---|---|---|");
        for (Result r : results) {
            say("| %d | %,d | %,.1f | %,d | %d | %.3f | %.3f | %.3f | %.3f | %.2f / %.0f %% | %d | %s | %s → %s |",
                    r.run(), r.rateAsked(), r.rateAchieved(), r.count(), r.errors(), r.p50(), r.p99(), r.p999(),
                    r.max(), r.webhookCpu(), 100 * r.webhookCpu() / duration, r.rssKiB() / 1024, r.gc(),
                    r.loadBefore(), r.loadAfter());
        }
    }

    static void say(String format, Object... args) {
        System.out.println(String.format(Locale.ROOT, format, args));
    }
}
