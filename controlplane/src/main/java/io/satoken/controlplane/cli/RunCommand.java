package io.satoken.controlplane.cli;

import io.kubernetes.client.openapi.ApiClient;
import io.satoken.common.cli.CleanExit;
import io.satoken.common.cli.ClusterCommand;
import io.satoken.common.cli.DurationConverter;
import io.satoken.common.cli.UsageErrors;
import io.satoken.common.kube.RateLimiter;
import io.satoken.common.text.DurationText;
import io.satoken.controlplane.injection.InjectionCheckController;
import io.satoken.controlplane.jwt.KeyFileException;
import io.satoken.controlplane.jwt.LegacyTokenGenerator;
import io.satoken.controlplane.jwt.ServiceAccountSigner;
import io.satoken.controlplane.rootca.RootCaBundle;
import io.satoken.controlplane.rootca.RootCaPublisher;
import io.satoken.controlplane.runtime.AdmissionWebhook;
import io.satoken.controlplane.runtime.ClientRateLimit;
import io.satoken.controlplane.runtime.ControllerSelection;
import io.satoken.controlplane.runtime.ControlplaneRuntime;
import io.satoken.controlplane.tokens.TokensController;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.UnknownHostException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.Callable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine;

/**
 * {@code satoken-controlplane run}: runs the selected controllers until stopped or leadership is lost. Before
 * it touches the cluster it checks every flag, those of disabled parts too, and reads every key, certificate
 * and CA file given ({@link #check()}); all the errors found are reported at once. {@link ValidateCommand}
 * does only that.
 */
@Command(name = "run", mixinStandardHelpOptions = true, sortOptions = false,
        description = {"Run the controllers and the admission webhook against the cluster.",
                "Exit codes: 0 stopped by a signal, 1 lost leadership or failed, 2 bad flags, key, CA or "
                        + "certificate file."},
        footerHeading = "%nExamples:%n",
        footer = { // laid out by ExampleFooter
            "# The controllers but tokens, leader-elected, as 30-deployment.yaml runs them",
            "satoken-controlplane run --controllers='*' --leader-elect-namespace=satoken-controlplane"
                    + " --metrics-address=0.0.0.0:10260",
            "# The webhook alone, as 35-webhook-deployment.yaml runs it",
            "satoken-controlplane run --controllers=-* --leader-elect=false --webhook-address=0.0.0.0:9443"
                    + " --tls-cert-file=/etc/satoken/webhook-tls/tls.crt"
                    + " --tls-private-key-file=/etc/satoken/webhook-tls/tls.key"
                    + " --agent-service-account=satoken-system/satoken-agent",
            "# Outside the cluster, on a host as trusted as the API server, with tokens",
            "satoken-controlplane run --kubeconfig=/etc/satoken/controlplane.kubeconfig --controllers='*,tokens'"
                    + " --service-account-private-key-file=/etc/kubernetes/pki/sa.key"
                    + " --root-ca-file=/etc/kubernetes/pki/ca.crt --leader-elect-lease-duration=1m"
                    + " --leader-elect-renew-deadline=40s --leader-elect-retry-period=8s",
            "# A large cluster: more controller requests per second than the default 20",
            "satoken-controlplane run --kube-api-qps=50 --kube-api-burst=100 --controllers='*,tokens'"
                    + " --service-account-private-key-file=/etc/kubernetes/pki/sa.key"})
class RunCommand extends ClusterCommand implements Callable<Integer> {

    /** Where a pod finds the cluster's CA when {@code --root-ca-file} is not given. */
    static final Path IN_CLUSTER_CA = Path.of("/var/run/secrets/kubernetes.io/serviceaccount/ca.crt");

    private static final Logger startLog = LoggerFactory.getLogger(RunCommand.class);

    RunCommand() {
        super("0.0.0.0:10260");
    }

    @Option(names = "--controllers", paramLabel = "LIST", defaultValue = "*",
            description = """
                    Controllers to run: serviceaccounts, root-ca, aggregation, tokens, injection-check; '*' for \
                    all but tokens and injection-check, '-name' disables one; tokens (legacy token Secrets, signed \
                    with the ServiceAccount key) and injection-check (pods the webhook did not mutate) run only when \
                    named, e.g. '*,tokens' (default: ${DEFAULT-VALUE}).""")
    String controllers;

    @Option(names = "--service-account-private-key-file", paramLabel = "FILE",
            description = """
                    PEM private key (RSA, or EC P-256/384/521; PKCS#1, PKCS#8 or SEC1) that signs legacy \
                    token Secrets. Required by the tokens controller, and read only by it.""")
    Path privateKeyFile;

    @Option(names = "--root-ca-file", paramLabel = "FILE",
            description = """
                    PEM CA bundle put in token Secrets (ca.crt) and in every kube-root-ca.crt ConfigMap; \
                    default in a pod: \
                    /var/run/secrets/kubernetes.io/serviceaccount/ca.crt.""")
    Path rootCaFile;

    @Option(names = "--legacy-token-auto-create", defaultValue = "false",
            description = """
                    Create a <sa>-token-xxxxx Secret for every ServiceAccount and list it in .secrets, as \
                    Kubernetes 1.17 did (default: ${DEFAULT-VALUE}, the 1.30 behaviour).""")
    boolean legacyTokenAutoCreate;

    @Option(names = "--injection-check-delete-pods", defaultValue = "false",
            description = """
                    Let injection-check evict (Eviction API: PodDisruptionBudgets hold) the pods it finds \
                    without the token volume when the pod template of their ReplicaSet, StatefulSet, DaemonSet or \
                    Job asks for tokens, so that they are created again through the webhook; never a bare pod, one \
                    annotated after its creation, nor one in a namespace the webhook skips (default: \
                    ${DEFAULT-VALUE}).""")
    boolean injectionCheckEvictPods;

    @Option(names = "--concurrent-syncs", paramLabel = "N", defaultValue = "5",
            description = "Workers per controller queue (default: ${DEFAULT-VALUE}).")
    int concurrentSyncs;

    @Option(names = "--kube-api-qps", paramLabel = "QPS", defaultValue = "20",
            description = """
                    The controllers' requests to the API server per second, sustained, as \
                    kube-controller-manager's flag; the Lease and the webhook are not limited (default: \
                    ${DEFAULT-VALUE}).""")
    double kubeApiQps;

    @Option(names = "--kube-api-burst", paramLabel = "N", defaultValue = "30",
            description = """
                    The controllers' requests allowed in a burst above --kube-api-qps (default: \
                    ${DEFAULT-VALUE}).""")
    int kubeApiBurst;

    @Option(names = "--leader-elect", negatable = true, defaultValue = "true", fallbackValue = "true",
            description = "Run the controllers only while holding a Lease (default: ${DEFAULT-VALUE}).")
    boolean leaderElect;

    @Option(names = "--leader-elect-namespace", paramLabel = "NS", defaultValue = "kube-system",
            description = "Namespace of the Lease (default: ${DEFAULT-VALUE}).")
    String leaderElectNamespace;

    @Option(names = "--leader-elect-resource-name", paramLabel = "NAME", defaultValue = "satoken-controlplane",
            description = "Name of the Lease (default: ${DEFAULT-VALUE}).")
    String leaderElectName;

    @Option(names = "--leader-elect-lease-duration", paramLabel = "DURATION", defaultValue = "15s",
            converter = DurationConverter.class,
            description = "How long followers wait before taking over an unrenewed Lease (default: ${DEFAULT-VALUE}).")
    Duration leaseDuration;

    @Option(names = "--leader-elect-renew-deadline", paramLabel = "DURATION", defaultValue = "10s",
            converter = DurationConverter.class,
            description = "How long the leader keeps trying to renew before giving up (default: ${DEFAULT-VALUE}).")
    Duration renewDeadline;

    @Option(names = "--leader-elect-retry-period", paramLabel = "DURATION", defaultValue = "2s",
            converter = DurationConverter.class,
            description = "Pause between tries to acquire or renew (default: ${DEFAULT-VALUE}).")
    Duration retryPeriod;

    @CommandLine.Mixin
    WebhookOptions webhook;

    @Override
    public Integer call() throws Exception {
        logs.apply();
        Checked checked = check();
        ApiClient client = startClient(startLog);
        ApiClient watchClient = client();
        watchClient.setReadTimeout(0); // a watch is one long request
        ApiClient serviceClient = client();
        // the controllers' requests and their informers' lists and watches share one budget, as in
        // kube-controller-manager; the Lease and the webhook keep theirs out of the controllers' queue
        RateLimiter limiter = new RateLimiter(kubeApiQps, kubeApiBurst, RateLimiter.DEFAULT_MAX_WAIT);
        ClientRateLimit.apply(client, limiter);
        ClientRateLimit.apply(watchClient, limiter);
        ControlplaneRuntime.LeaderElection election = leaderElect
                ? new ControlplaneRuntime.LeaderElection(leaderElectNamespace, leaderElectName, identity(),
                        leaseDuration, renewDeadline, retryPeriod)
                : null;
        ControlplaneRuntime runtime = new ControlplaneRuntime(new ControlplaneRuntime.Settings(checked.controllers(),
                checked.signer(), checked.rootCa(), legacyTokenAutoCreate, concurrentSyncs, checked.metricsAddress(),
                election, checked.webhook(), injectionCheckEvictPods), client, watchClient, serviceClient);
        Thread onSigterm = CleanExit.onSigterm(runtime::close);
        int status;
        try {
            runtime.startServing();
            status = runtime.run();
        } catch (Exception e) {
            if (CleanExit.cancel(onSigterm)) { // a failed start exits with its own status, not the hook's 0
                runtime.close();
            }
            throw e;
        }
        if (CleanExit.cancel(onSigterm)) { // ended on its own (a lost Lease): run's status stands
            runtime.close();
        } // else SIGTERM: the hook is closing the runtime and ends the JVM with 0
        return status;
    }

    /** What {@code run} starts with: every flag checked, every file read; {@code webhook} null when it is off. */
    record Checked(Set<String> controllers, InetSocketAddress metricsAddress, LegacyTokenGenerator signer,
            byte[] rootCa, AdmissionWebhook.Settings webhook) {
    }

    /**
     * Checks every flag, the flags of disabled parts too, and reads every key, certificate, CA and kubeconfig file
     * given, without contacting a cluster.
     *
     * @throws UsageErrors with every error found, each naming its flag
     */
    Checked check() {
        List<String> errors = new ArrayList<>();
        Set<String> selected = UsageErrors.attempt(errors, () -> ControllerSelection.parse(controllers));
        InetSocketAddress address = clientAndMetrics.metricsAddress(errors);
        if (!(kubeApiQps > 0) || Double.isInfinite(kubeApiQps)) {
            errors.add("--kube-api-qps must be a positive number, got " + kubeApiQps);
        }
        if (kubeApiBurst < 1) {
            errors.add("--kube-api-burst must be at least 1, got " + kubeApiBurst);
        }
        if (concurrentSyncs < 1) {
            errors.add("--concurrent-syncs must be at least 1, got " + concurrentSyncs);
        }
        // checked with --no-leader-elect too: a later --leader-elect must not find them broken
        if (!(leaseDuration.compareTo(renewDeadline) > 0 && renewDeadline.compareTo(retryPeriod) > 0)) {
            errors.add("leader election needs lease duration > renew deadline > retry period, got "
                    + DurationText.of(leaseDuration) + " > " + DurationText.of(renewDeadline) + " > "
                    + DurationText.of(retryPeriod));
        }
        if (injectionCheckEvictPods && (selected == null || !selected.contains(InjectionCheckController.NAME))) {
            errors.add("--injection-check-delete-pods needs the injection-check controller: name it in --controllers"
                    + " (e.g. '*,injection-check')");
        }
        boolean tokens = selected != null && selected.contains(TokensController.NAME);
        if (tokens && privateKeyFile == null) {
            errors.add("the tokens controller needs --service-account-private-key-file"
                    + " (or do not name it in --controllers: it is off unless named)");
        }
        LegacyTokenGenerator signer = null;
        if (privateKeyFile != null) { // read even when the tokens controller is off
            try {
                signer = ServiceAccountSigner.load(privateKeyFile);
            } catch (KeyFileException e) {
                errors.add(e.getMessage());
            }
        }
        Path caFile = rootCaFile != null ? rootCaFile : Files.isRegularFile(IN_CLUSTER_CA) ? IN_CLUSTER_CA : null;
        byte[] rootCa = caFile == null ? new byte[0] : UsageErrors.attempt(errors, () -> RootCaBundle.load(caFile));
        if (caFile == null && selected != null && selected.contains(RootCaPublisher.NAME)) {
            errors.add("the root-ca controller needs --root-ca-file (or leave it out: --controllers=*,-root-ca)");
        }
        AdmissionWebhook.Settings webhookSettings = webhook.settings(errors);
        if (selected != null && selected.isEmpty() && webhook.address == null) {
            errors.add("--controllers selects no controller and --webhook-address is not given: nothing to run");
        }
        throwIfAny(errors);
        return new Checked(selected, address, tokens ? signer : null, rootCa, webhookSettings);
    }

    /** Upstream's form: the host name and a UUID, so two processes on one host never share an identity. */
    static String identity() {
        String host;
        try {
            host = InetAddress.getLocalHost().getHostName();
        } catch (UnknownHostException e) {
            host = "unknown";
        }
        return host + "_" + UUID.randomUUID();
    }
}
