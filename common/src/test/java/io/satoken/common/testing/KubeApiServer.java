package io.satoken.common.testing;

import io.kubernetes.client.openapi.ApiClient;
import io.kubernetes.client.openapi.ApiException;
import io.kubernetes.client.openapi.apis.CoreV1Api;
import io.kubernetes.client.openapi.apis.VersionApi;
import io.kubernetes.client.openapi.models.AuthenticationV1TokenRequest;
import io.kubernetes.client.openapi.models.V1Namespace;
import io.kubernetes.client.openapi.models.V1ObjectMeta;
import io.kubernetes.client.openapi.models.V1ServiceAccount;
import io.kubernetes.client.openapi.models.V1TokenRequestSpec;
import io.kubernetes.client.util.ClientBuilder;
import io.kubernetes.client.util.credentials.AccessTokenAuthentication;
import io.satoken.common.kube.TolerantJson;
import java.io.File;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.HttpURLConnection;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.KeyPair;
import java.security.KeyPairGenerator;
import java.security.NoSuchAlgorithmException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import java.util.stream.Stream;
import okhttp3.Request;
import okhttp3.Response;

/**
 * A real kube-apiserver backed by a real etcd, both on free loopback ports, for *IT tests.
 *
 * <p>Binaries: kube-apiserver from the system property {@value #ASSETS_PROPERTY} when set (the build's
 * second tier, a newer Kubernetes), else {@code $KUBEBUILDER_ASSETS} (default {@value #DEFAULT_ASSETS}); etcd
 * from the same directory or else from {@code PATH} (Debian's {@code etcd-server}). Everything the
 * processes write (data dir, certificates, keys, logs) lives in one temp directory removed by
 * {@link #close()}.
 *
 * <p>The server runs with RBAC, a static admin token in {@code system:masters}, a fresh RSA
 * service-account key and issuer {@value #ISSUER}. There is no controller-manager, so nothing creates
 * the {@code default} ServiceAccount of a namespace; the ServiceAccount admission plugin would therefore
 * reject every Pod, and is disabled unless a test overrides {@code --disable-admission-plugins}.
 *
 * <p>{@link #stop()} and {@link #start()} stop and restart the API server alone, on the same port and
 * with the same etcd, so tests can simulate an API outage.
 */
public final class KubeApiServer implements AutoCloseable {

    public static final String DEFAULT_ASSETS = "/usr/local/kubebuilder/bin";
    /** The system property naming a binaries directory that wins over {@code $KUBEBUILDER_ASSETS}. */
    public static final String ASSETS_PROPERTY = "satoken.kubeAssets";
    public static final String ISSUER = "https://kubernetes.default.svc.cluster.local";

    private static final Duration READY_TIMEOUT = Duration.ofSeconds(60);
    private static final int LOG_TAIL_LINES = 40;

    private final Path binaryDir;
    private final Path etcdBinary;
    private final Map<String, List<String>> flagsSet;
    private final Map<String, List<String>> flagsAdded;
    private final String adminToken = "admin-" + UUID.randomUUID();

    private Path tempDir;
    private Path etcdDataDir;
    private int etcdClientPort;
    private int securePort;
    // volatile, not guarded: the shutdown hook kills them without taking the lock a starting thread holds
    private volatile ManagedProcess etcd;
    private volatile ManagedProcess apiServer;
    private Thread shutdownHook;
    private ApiClient adminClient;

    private KubeApiServer(Builder builder) {
        this.binaryDir = builder.binaryDir;
        this.etcdBinary = builder.etcdBinary;
        this.flagsSet = new LinkedHashMap<>(builder.set);
        this.flagsAdded = new LinkedHashMap<>(builder.added);
    }

    /** A server with the default flags; {@link #builder()} for others. Nothing runs until {@link #start()}. */
    public static KubeApiServer create() {
        return builder().build();
    }

    public static Builder builder() {
        return new Builder();
    }

    /** {@code $KUBEBUILDER_ASSETS} or the default, when it holds an executable kube-apiserver. */
    public static Optional<Path> binaryDir() {
        Path dir = assetsDir();
        return Files.isExecutable(dir.resolve("kube-apiserver")) ? Optional.of(dir) : Optional.empty();
    }

    /** The directory searched for binaries, whether or not it holds them. */
    public static Path assetsDir() {
        String property = System.getProperty(ASSETS_PROPERTY);
        if (property != null && !property.isBlank()) {
            return Path.of(property);
        }
        String env = System.getenv("KUBEBUILDER_ASSETS");
        return Path.of(env == null || env.isBlank() ? DEFAULT_ASSETS : env);
    }

    /** The running server's {@code /version} gitVersion, e.g. {@code v1.26.1}. */
    public String gitVersion() throws IOException {
        try {
            return new VersionApi(adminClient()).getCode().execute().getGitVersion();
        } catch (ApiException e) {
            throw new IOException("GET /version: HTTP " + e.getCode(), e);
        }
    }

    /** The server's own {@code /metrics} text, read as admin. */
    public String metricsText() throws IOException {
        Request req = new Request.Builder().url(url() + "/metrics").header("Authorization", "Bearer " + adminToken())
                .build();
        try (Response r = adminClient().getHttpClient().newCall(req).execute()) {
            if (r.code() != 200) {
                throw new IOException("kube-apiserver /metrics answered " + r.code());
            }
            return r.body().string();
        }
    }

    /** etcd next to kube-apiserver, else the first {@code etcd} on {@code PATH}. */
    public static Optional<Path> etcdBinary() {
        Path beside = assetsDir().resolve("etcd");
        if (Files.isExecutable(beside)) {
            return Optional.of(beside);
        }
        String path = System.getenv().getOrDefault("PATH", "");
        return Stream.of(path.split(File.pathSeparator))
                .filter(s -> !s.isEmpty())
                .map(s -> Path.of(s, "etcd"))
                .filter(Files::isExecutable)
                .findFirst();
    }

    /**
     * Starts etcd (first call only) and the API server, and waits until {@code /readyz} answers 200
     * (at most 60 s). On failure the processes are stopped (etcd only if this call started it) and
     * the exception holds the tail of both logs.
     */
    public synchronized KubeApiServer start() throws IOException {
        if (apiServer != null) {
            throw new IllegalStateException("kube-apiserver already running at " + url());
        }
        boolean first = tempDir == null;
        if (first) {
            tempDir = Files.createTempDirectory("kube-apiserver-");
            writeCredentials();
            etcdClientPort = freePort();
            securePort = freePort();
            shutdownHook = new Thread(this::killProcesses, "kube-apiserver-shutdown");
            Runtime.getRuntime().addShutdownHook(shutdownHook);
        }
        try {
            if (etcd == null) {
                etcd = ManagedProcess.start("etcd", etcdCommand(), log("etcd"));
                etcd.awaitReady(this::etcdHealthy, READY_TIMEOUT);
            }
            apiServer = ManagedProcess.start("kube-apiserver", apiServerCommand(), log("kube-apiserver"));
            apiServer.awaitReady(this::apiServerReady, READY_TIMEOUT);
            if (first) {
                // one loud line per server, so a report says which Kubernetes each test ran against
                System.out.println("==== kube-apiserver " + gitVersion() + " from " + assetsDir() + " ====");
            }
        } catch (IOException | RuntimeException e) {
            String logs = ManagedProcess.logTail(log("etcd"), LOG_TAIL_LINES)
                    + ManagedProcess.logTail(log("kube-apiserver"), LOG_TAIL_LINES);
            if (first) {
                close();
            } else {
                stop();
            }
            throw new IOException(e.getMessage() + "\n" + logs, e);
        }
        return this;
    }

    /** Stops the API server alone (SIGTERM, then SIGKILL after 10 s); etcd and the port stay. */
    public synchronized void stop() {
        if (apiServer != null) {
            apiServer.terminate();
            apiServer = null;
        }
    }

    /** Kills both processes and deletes the temp directory. */
    @Override
    public synchronized void close() {
        killProcesses();
        if (shutdownHook != null) {
            try {
                Runtime.getRuntime().removeShutdownHook(shutdownHook);
            } catch (IllegalStateException shuttingDown) {
                // the hook is running or about to: it does the same
            }
            shutdownHook = null;
        }
        if (etcdDataDir != null) {
            deleteRecursively(etcdDataDir); // may be outside the temp dir, on tmpfs
            etcdDataDir = null;
        }
        if (tempDir != null) {
            deleteRecursively(tempDir);
            tempDir = null;
        }
    }

    public String url() {
        return "https://127.0.0.1:" + securePort;
    }

    /** A client acting as {@code admin} in {@code system:masters}. */
    public synchronized ApiClient adminClient() {
        if (adminClient == null) {
            adminClient = clientFor(adminToken);
        }
        return adminClient;
    }

    /** The static token of {@code admin} ({@code system:masters}), e.g. for {@link #writeKubeconfig}. */
    public String adminToken() {
        return adminToken;
    }

    /**
     * A client sending {@code bearerToken}, trusting this server's self-signed certificate. Like the programs'
     * own clients it reads with {@link TolerantJson}, so tests can read what a newer server writes.
     */
    public ApiClient clientFor(String bearerToken) {
        TolerantJson.install();
        try {
            ApiClient client = new ClientBuilder()
                    .setBasePath(url())
                    .setCertificateAuthority(Files.readAllBytes(servingCertificate()))
                    .setAuthentication(new AccessTokenAuthentication(bearerToken))
                    .setReadTimeout(Duration.ofSeconds(30))
                    .build();
            client.setConnectTimeout(10_000);
            return client;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** Writes a kubeconfig (mode 0600) that reaches this server with {@code bearerToken}. */
    public void writeKubeconfig(Path file, String bearerToken) throws IOException {
        String ca = Base64.getEncoder().encodeToString(Files.readAllBytes(servingCertificate()));
        String yaml = """
                apiVersion: v1
                kind: Config
                clusters:
                - name: satoken-test
                  cluster:
                    server: %s
                    certificate-authority-data: %s
                users:
                - name: satoken-test
                  user:
                    token: %s
                contexts:
                - name: satoken-test
                  context:
                    cluster: satoken-test
                    user: satoken-test
                current-context: satoken-test
                """.formatted(url(), ca, bearerToken);
        Files.deleteIfExists(file);
        Files.createFile(file, PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rw-------")));
        Files.writeString(file, yaml);
    }

    /** The PEM private key the server signs ServiceAccount tokens with. */
    public Path serviceAccountSigningKey() {
        return tempDir.resolve("sa.key");
    }

    /** The PEM public key the server verifies ServiceAccount tokens with. */
    public Path serviceAccountPublicKey() {
        return tempDir.resolve("sa.pub");
    }

    /** The self-signed serving certificate and its CA, as the server wrote them to {@code --cert-dir}. */
    public Path servingCertificate() {
        return tempDir.resolve("certs/apiserver.crt");
    }

    /**
     * The temp directory; the processes' output is in {@code etcd.log} and {@code kube-apiserver.log}.
     * etcd's data is here too, unless the etcd is too old for {@code --unsafe-no-fsync} and
     * {@code /dev/shm} is available: then it lives there, so fsync costs nothing.
     */
    public Path workDir() {
        return tempDir;
    }

    /** Creates a namespace named {@code prefix-<random>} (server-side generateName) and returns its name. */
    public String createNamespace(String prefix) throws ApiException {
        V1Namespace ns = new V1Namespace().metadata(new V1ObjectMeta().generateName(prefix + "-"));
        return new CoreV1Api(adminClient()).createNamespace(ns).execute().getMetadata().getName();
    }

    /** Creates a ServiceAccount; one that exists already is left as it is. */
    public void createServiceAccount(String namespace, String name) throws ApiException {
        V1ServiceAccount sa = new V1ServiceAccount().metadata(new V1ObjectMeta().name(name));
        try {
            new CoreV1Api(adminClient()).createNamespacedServiceAccount(namespace, sa).execute();
        } catch (ApiException e) {
            if (e.getCode() != HttpURLConnection.HTTP_CONFLICT) {
                throw e;
            }
        }
    }

    /**
     * Creates the ServiceAccount if needed and returns a one-hour token for it (a TokenRequest with the
     * server's own audiences), so a test can act as that ServiceAccount through {@link #clientFor}.
     */
    public String serviceAccountToken(String namespace, String name) throws ApiException {
        createServiceAccount(namespace, name);
        AuthenticationV1TokenRequest request = new AuthenticationV1TokenRequest()
                .spec(new V1TokenRequestSpec().expirationSeconds(3600L));
        return new CoreV1Api(adminClient())
                .createNamespacedServiceAccountToken(name, namespace, request).execute()
                .getStatus().getToken();
    }

    // --- processes -------------------------------------------------------------------------------

    private List<String> etcdCommand() throws IOException {
        int peerPort = freePort();
        String client = "http://127.0.0.1:" + etcdClientPort;
        String peer = "http://127.0.0.1:" + peerPort;
        boolean noFsync = etcdSupports("--unsafe-no-fsync");
        etcdDataDir = noFsync ? tempDir.resolve("etcd-data") : memoryBackedDir().orElse(tempDir.resolve("etcd-data"));
        List<String> cmd = new ArrayList<>(List.of(etcdBinary.toString(),
                "--name=default",
                "--data-dir=" + etcdDataDir,
                "--listen-client-urls=" + client,
                "--advertise-client-urls=" + client,
                "--listen-peer-urls=" + peer,
                "--initial-advertise-peer-urls=" + peer,
                "--initial-cluster=default=" + peer,
                "--log-level=warn"));
        if (noFsync) {
            cmd.add("--unsafe-no-fsync"); // a test cluster need not survive power loss
        }
        return cmd;
    }

    /** etcd before 3.5 always fsyncs; on tmpfs that costs nothing. */
    private static Optional<Path> memoryBackedDir() {
        Path shm = Path.of("/dev/shm");
        try {
            return Files.isDirectory(shm) && Files.isWritable(shm)
                    ? Optional.of(Files.createTempDirectory(shm, "kube-apiserver-etcd-"))
                    : Optional.empty();
        } catch (IOException e) {
            return Optional.empty();
        }
    }

    private List<String> apiServerCommand() {
        Map<String, List<String>> flags = new LinkedHashMap<>();
        flags.put("--etcd-servers", List.of("http://127.0.0.1:" + etcdClientPort));
        flags.put("--bind-address", List.of("127.0.0.1"));
        flags.put("--advertise-address", List.of("127.0.0.1"));
        flags.put("--secure-port", List.of(Integer.toString(securePort)));
        flags.put("--cert-dir", List.of(tempDir.resolve("certs").toString()));
        flags.put("--token-auth-file", List.of(tempDir.resolve("tokens.csv").toString()));
        flags.put("--authorization-mode", List.of("RBAC"));
        flags.put("--service-account-issuer", List.of(ISSUER));
        flags.put("--api-audiences", List.of(ISSUER));
        flags.put("--service-account-key-file", List.of(serviceAccountPublicKey().toString()));
        flags.put("--service-account-signing-key-file", List.of(serviceAccountSigningKey().toString()));
        flags.put("--service-cluster-ip-range", List.of("10.0.0.0/24"));
        flags.put("--allow-privileged", List.of("true"));
        flags.put("--disable-admission-plugins", List.of("ServiceAccount"));
        flags.putAll(flagsSet);
        flagsAdded.forEach((name, values) -> flags.merge(name, values,
                (before, more) -> Stream.concat(before.stream(), more.stream()).toList()));

        List<String> cmd = new ArrayList<>();
        cmd.add(binaryDir.resolve("kube-apiserver").toString());
        flags.forEach((name, values) -> values.forEach(v -> cmd.add(name + "=" + v)));
        return cmd;
    }

    private boolean etcdSupports(String flag) throws IOException {
        Process help = new ProcessBuilder(etcdBinary.toString(), "--help").redirectErrorStream(true).start();
        String text = new String(help.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        return text.contains(flag);
    }

    private boolean etcdHealthy() throws IOException {
        HttpURLConnection c = (HttpURLConnection)
                URI.create("http://127.0.0.1:" + etcdClientPort + "/health").toURL().openConnection();
        c.setConnectTimeout(1000);
        c.setReadTimeout(1000);
        try {
            return c.getResponseCode() == 200;
        } finally {
            c.disconnect();
        }
    }

    private boolean apiServerReady() throws IOException {
        if (!Files.exists(servingCertificate())) {
            return false; // the server writes its self-signed certificate early in start-up
        }
        Request readyz = new Request.Builder().url(url() + "/readyz")
                .header("Authorization", "Bearer " + adminToken).build();
        try (Response r = adminClient().getHttpClient().newCall(readyz).execute()) {
            return r.code() == 200;
        }
    }

    private void killProcesses() {
        ManagedProcess a = apiServer;
        ManagedProcess e = etcd;
        apiServer = null;
        etcd = null;
        if (a != null) {
            a.kill();
        }
        if (e != null) {
            e.kill();
        }
    }

    private Path log(String process) {
        return tempDir.resolve(process + ".log");
    }

    // --- files -----------------------------------------------------------------------------------

    /** The service-account key pair and the static token file with the admin user. */
    private void writeCredentials() throws IOException {
        KeyPair keys;
        try {
            KeyPairGenerator gen = KeyPairGenerator.getInstance("RSA");
            gen.initialize(2048);
            keys = gen.generateKeyPair();
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
        Files.writeString(serviceAccountSigningKey(), pem("PRIVATE KEY", keys.getPrivate().getEncoded()));
        Files.writeString(serviceAccountPublicKey(), pem("PUBLIC KEY", keys.getPublic().getEncoded()));
        // token,user,uid,"groups"
        Files.writeString(tempDir.resolve("tokens.csv"), adminToken + ",admin,admin-uid,\"system:masters\"\n");
    }

    private static String pem(String type, byte[] der) {
        String body = Base64.getMimeEncoder(64, "\n".getBytes(StandardCharsets.US_ASCII)).encodeToString(der);
        return "-----BEGIN " + type + "-----\n" + body + "\n-----END " + type + "-----\n";
    }

    private static int freePort() throws IOException {
        try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            return s.getLocalPort();
        }
    }

    private static void deleteRecursively(Path dir) {
        try (Stream<Path> paths = Files.walk(dir)) {
            paths.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
        } catch (IOException e) {
            System.err.println("could not delete " + dir + ": " + e.getMessage());
        }
    }

    /** Flags and binaries for a {@link KubeApiServer}. */
    public static final class Builder {
        private Path binaryDir = KubeApiServer.binaryDir().orElse(null);
        private Path etcdBinary = KubeApiServer.etcdBinary().orElse(null);
        private final Map<String, List<String>> set = new LinkedHashMap<>();
        private final Map<String, List<String>> added = new LinkedHashMap<>();

        private Builder() {
        }

        /**
         * Sets {@code name} (e.g. {@code "--max-requests-inflight"}) to one value, replacing the default.
         * An empty value passes {@code --name=}, which for list flags means "none".
         */
        public Builder flag(String name, String value) {
            set.put(checkName(name), List.of(value));
            return this;
        }

        /**
         * Passes a repeatable flag once more after its default or {@link #flag set} value, e.g. a second
         * {@code --service-account-key-file} next to the server's own key.
         */
        public Builder addFlag(String name, String value) {
            added.computeIfAbsent(checkName(name), n -> new ArrayList<>()).add(value);
            return this;
        }

        public Builder binaryDir(Path dir) {
            this.binaryDir = dir;
            return this;
        }

        public Builder etcdBinary(Path etcd) {
            this.etcdBinary = etcd;
            return this;
        }

        public KubeApiServer build() {
            if (binaryDir == null) {
                throw new IllegalStateException("kube-apiserver not found in " + assetsDir());
            }
            if (etcdBinary == null) {
                throw new IllegalStateException("etcd not found in " + assetsDir() + " or on PATH");
            }
            return new KubeApiServer(this);
        }

        private static String checkName(String name) {
            if (!name.startsWith("--") || name.contains("=")) {
                throw new IllegalArgumentException("flag name: expected --name without a value, got " + name);
            }
            return name;
        }
    }
}
