package io.satoken.common.kube;

import io.kubernetes.client.openapi.ApiClient;
import io.kubernetes.client.util.ClientBuilder;
import io.kubernetes.client.util.Config;
import io.kubernetes.client.util.KubeConfig;
import io.kubernetes.client.util.SSLUtils;
import java.io.File;
import java.io.IOException;
import java.io.Reader;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.stream.Stream;
import org.yaml.snakeyaml.constructor.DuplicateKeyException;
import org.yaml.snakeyaml.error.Mark;
import org.yaml.snakeyaml.error.MarkedYAMLException;
import org.yaml.snakeyaml.error.YAMLException;
import org.yaml.snakeyaml.parser.ParserException;
import org.yaml.snakeyaml.scanner.ScannerException;

/**
 * Finds a satoken process's connection to the API server, the way kubectl-like tools do, in this order:
 *
 * <ol>
 *   <li>the {@code --kubeconfig} file, when given;
 *   <li>in-cluster: the pod's ServiceAccount files under {@value Config#SERVICEACCOUNT_ROOT} and
 *       {@code KUBERNETES_SERVICE_HOST} (a DaemonSet or Deployment pod);
 *   <li>{@code $KUBECONFIG} (the first existing file of a {@code :}-separated list);
 *   <li>{@code ~/.kube/config} (a node's systemd unit running as a user with a kubeconfig).
 * </ol>
 *
 * <p>Every client reads objects with {@link TolerantJson}: a field a newer API server adds is skipped, not an
 * error.
 *
 * <p>The client gets a 10 s connect timeout and a 30 s read timeout, so that a token request cannot
 * hang a refresh thread forever. That makes it unfit for watches; a watcher needs its own client.
 */
public final class KubeClients {

    public static final Duration CONNECT_TIMEOUT = Duration.ofSeconds(10);
    public static final Duration READ_TIMEOUT = Duration.ofSeconds(30);

    /** Where the configuration comes from: a kubeconfig file, or the pod's ServiceAccount. */
    record Choice(Path kubeconfig) {
        static final Choice IN_CLUSTER = new Choice(null);

        boolean inCluster() {
            return kubeconfig == null;
        }
    }

    static {
        loadSslUtilsWithoutScanning();
    }

    private KubeClients() {
    }

    /**
     * client-java's {@link SSLUtils}, when first loaded, registers every {@link java.security.Provider} that a
     * {@link java.util.ServiceLoader} finds through the thread's context class loader. BouncyCastle's jar is on
     * the class path (client-java parses PEM keys of kubeconfigs with it), so that scan loaded about 420 of its
     * classes at every start and made it a JCA provider of the whole process, for nothing: keys, TLS and JWTs
     * use the JDK's providers, and a kubeconfig's PEM key still reads with BouncyCastle's parser. Loading the
     * class with the platform class loader as the context leaves the scan to the JDK's providers, all
     * registered already.
     */
    private static void loadSslUtilsWithoutScanning() {
        Thread thread = Thread.currentThread();
        ClassLoader context = thread.getContextClassLoader();
        thread.setContextClassLoader(ClassLoader.getPlatformClassLoader());
        try {
            Class.forName(SSLUtils.class.getName(), true, KubeClients.class.getClassLoader());
        } catch (ClassNotFoundException e) {
            throw new IllegalStateException("client-java's SSLUtils is missing", e);
        } finally {
            thread.setContextClassLoader(context);
        }
    }

    /**
     * A client for the process's API calls.
     *
     * @param kubeconfig the {@code --kubeconfig} flag; null when not given
     * @throws IOException when no configuration is found (the message lists what was tried) or it is unreadable
     */
    public static ApiClient fromFlags(Path kubeconfig) throws IOException {
        TolerantJson.install();
        Choice choice = choose(kubeconfig, System.getenv(),
                Path.of(System.getProperty("user.home")), Path.of(Config.SERVICEACCOUNT_ROOT));
        ApiClient client = choice.inCluster()
                ? ClientBuilder.cluster().setReadTimeout(READ_TIMEOUT).build()
                : fromKubeconfig(choice.kubeconfig());
        client.setConnectTimeout((int) CONNECT_TIMEOUT.toMillis());
        return client;
    }

    /**
     * Why {@link #fromFlags} would find no client configuration in this process's environment, without reading
     * any of it; empty when it would find one. For {@code validate}, which contacts no cluster.
     */
    public static Optional<String> missing(Path kubeconfig) {
        try {
            choose(kubeconfig, System.getenv(), Path.of(System.getProperty("user.home")),
                    Path.of(Config.SERVICEACCOUNT_ROOT));
            return Optional.empty();
        } catch (IOException e) {
            return Optional.of(e.getMessage());
        }
    }

    /** Applies the search order; the arguments stand for the process's environment so tests can vary it. */
    static Choice choose(Path kubeconfigFlag, Map<String, String> env, Path home, Path serviceAccountDir)
            throws IOException {
        if (kubeconfigFlag != null) {
            if (!Files.isRegularFile(kubeconfigFlag)) {
                throw new IOException("--kubeconfig " + kubeconfigFlag + ": not found");
            }
            return new Choice(kubeconfigFlag);
        }
        String serviceHost = env.get(Config.ENV_SERVICE_HOST);
        Path saToken = serviceAccountDir.resolve("token");
        if (serviceHost != null && !serviceHost.isEmpty() && Files.isRegularFile(saToken)) {
            return Choice.IN_CLUSTER;
        }
        String kubeconfigEnv = env.get(Config.ENV_KUBECONFIG);
        Optional<Path> fromEnv = kubeconfigEnv == null ? Optional.empty()
                : Stream.of(kubeconfigEnv.split(File.pathSeparator))
                        .filter(s -> !s.isEmpty())
                        .map(Path::of)
                        .filter(Files::isRegularFile)
                        .findFirst();
        if (fromEnv.isPresent()) {
            return new Choice(fromEnv.get());
        }
        Path homeConfig = home.resolve(".kube").resolve("config");
        if (Files.isRegularFile(homeConfig)) {
            return new Choice(homeConfig);
        }
        throw new IOException("no Kubernetes client configuration found: --kubeconfig not given; not in a cluster ("
                + (serviceHost == null || serviceHost.isEmpty() ? "$" + Config.ENV_SERVICE_HOST + " unset"
                        : saToken + " missing")
                + "); $" + Config.ENV_KUBECONFIG + " "
                + (kubeconfigEnv == null ? "unset" : "names no existing file (" + kubeconfigEnv + ")")
                + "; " + homeConfig + " missing");
    }

    /**
     * Reads a kubeconfig with client-java; relative paths in it resolve against the file's directory.
     *
     * <p>A kubeconfig holds credentials, and the parsers quote what they choke on: SnakeYAML's message shows
     * the offending line, a base64 decoder the offending character. So no message of theirs, and no
     * exception of theirs as a cause, leaves this method: the error names the file, the line and column
     * when the YAML parser knows them, and what is wrong in general terms.
     */
    static ApiClient fromKubeconfig(Path file) throws IOException {
        TolerantJson.install();
        KubeConfig config = load(file);
        config.setFile(file.toAbsolutePath().toFile());
        ApiClient client;
        try {
            client = ClientBuilder.kubeconfig(config).setReadTimeout(READ_TIMEOUT).build();
        } catch (IOException | RuntimeException e) {
            throw invalid(file, "its current context cannot be used (a server URL, certificate, key or credential"
                    + " in it is missing or malformed)");
        }
        client.setConnectTimeout((int) CONNECT_TIMEOUT.toMillis());
        return client;
    }

    /**
     * Checks a {@code --kubeconfig} file without using it: it must parse as a kubeconfig and its current
     * context must name a server. Neither connects nor runs a credential plugin, so a command that validates
     * its flags can call it anywhere; the errors are those of {@link #fromKubeconfig}, without the content.
     */
    public static void check(Path file) throws IOException {
        if (!Files.isRegularFile(file)) {
            throw new IOException("--kubeconfig " + file + ": not found");
        }
        KubeConfig config = load(file);
        String server;
        try {
            server = config.getServer();
        } catch (RuntimeException e) {
            throw invalid(file, "its current context cannot be read (a field of it is missing or has the wrong type)");
        }
        if (server == null || server.isBlank()) {
            throw invalid(file, "its current context names no cluster with a server URL");
        }
    }

    /**
     * {@link #check(Path)} for a command that reports every bad flag at once: the error, if any, is added to
     * {@code errors} instead of thrown. A null {@code file} (no {@code --kubeconfig} given) is not checked.
     */
    public static void check(Path file, List<String> errors) {
        if (file == null) {
            return;
        }
        try {
            check(file);
        } catch (IOException e) {
            errors.add(e.getMessage());
        }
    }

    private static KubeConfig load(Path file) throws IOException {
        KubeConfig config;
        try (Reader reader = Files.newBufferedReader(file)) {
            config = KubeConfig.loadKubeConfig(reader);
        } catch (MarkedYAMLException e) {
            throw invalid(file, at(e.getProblemMark()) + "not valid YAML (" + yamlProblem(e) + ")");
        } catch (YAMLException e) {
            throw invalid(file, "not valid YAML");
        } catch (RuntimeException e) {
            throw invalid(file, "not shaped like a kubeconfig (a field has the wrong type)");
        } catch (IOException e) {
            throw new IOException("kubeconfig " + file + ": cannot be read (" + Failures.inWords(e) + ")");
        }
        if (config == null) { // an empty file
            throw invalid(file, "empty");
        }
        return config;
    }

    private static IOException invalid(Path file, String what) {
        return new IOException("kubeconfig " + file + ": not a valid kubeconfig: " + what);
    }

    private static String at(Mark mark) {
        return mark == null ? "" : "line " + (mark.getLine() + 1) + ", column " + (mark.getColumn() + 1) + ": ";
    }

    /** The kind of YAML error, in words of our own: the parser's own problem text may quote the input. */
    private static String yamlProblem(MarkedYAMLException e) {
        if (e instanceof DuplicateKeyException) {
            return "a key appears twice in one map";
        }
        if (e instanceof ScannerException) {
            return "a character or quoted string that cannot be read";
        }
        if (e instanceof ParserException) {
            return "the structure is broken, e.g. an unclosed bracket or a misplaced indentation";
        }
        return "a construct that cannot be read";
    }
}
