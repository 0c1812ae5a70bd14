package io.satoken.controlplane.cli;

import io.kubernetes.client.openapi.ApiClient;
import io.satoken.common.cli.BuildVersion;
import io.satoken.common.cli.CleanExit;
import io.satoken.common.cli.ClientAndMetricsOptions;
import io.satoken.common.cli.DurationConverter;
import io.satoken.common.cli.LogOptions;
import io.satoken.common.cli.StartupLine;
import io.satoken.common.cli.UsageErrors;
import io.satoken.common.health.HealthServer;
import io.satoken.common.kube.KubeClients;
import io.satoken.controlplane.admission.AdmissionWebhook;
import io.satoken.controlplane.admission.ServiceAccountAdmission;
import io.satoken.controlplane.admission.ServingCertificate;
import io.satoken.controlplane.admission.WebhookServer;
import io.satoken.controlplane.jwt.KeyFileException;
import io.satoken.controlplane.jwt.LegacyTokenGenerator;
import io.satoken.controlplane.jwt.ServiceAccountSigner;
import io.satoken.controlplane.rootca.RootCaBundle;
import io.satoken.controlplane.rootca.RootCaPublisher;
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
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * {@code satoken-controlplane run}: runs the selected controllers until stopped or leadership is lost. Before
 * it touches the cluster it checks every flag, those of disabled parts too, and reads every key, certificate
 * and CA file given ({@link #check()}); all the errors found are reported at once. {@link ValidateCommand}
 * does only that.
 */
@Command(name = "run", mixinStandardHelpOptions = true, sortOptions = false,
        description = {"Run the controllers and the admission webhook against the cluster.",
                "Exit codes: 0 stopped by a signal, 1 lost leadership or failed, 2 bad flags, key, CA or "
                        + "certificate file."})
class RunCommand implements Callable<Integer> {

    /** Where a pod finds the cluster's CA when {@code --root-ca-file} is not given. */
    static final Path IN_CLUSTER_CA = Path.of("/var/run/secrets/kubernetes.io/serviceaccount/ca.crt");

    private static final Logger startLog = LoggerFactory.getLogger(RunCommand.class);

    @CommandLine.Spec
    CommandLine.Model.CommandSpec spec;

    @CommandLine.Mixin
    LogOptions logs;

    @CommandLine.Mixin
    ClientAndMetricsOptions clientAndMetrics = new ClientAndMetricsOptions("0.0.0.0:10260");

    @Option(names = "--controllers", paramLabel = "LIST", defaultValue = "*",
            description = "Controllers to run: tokens, serviceaccounts, root-ca, aggregation; '*' for all, "
                    + "'-name' disables one (default: ${DEFAULT-VALUE}).")
    String controllers;

    @Option(names = "--service-account-private-key-file", paramLabel = "FILE",
            description = "PEM private key (RSA, or EC P-256/384/521; PKCS#1, PKCS#8 or SEC1) that signs legacy "
                    + "token Secrets. Required by the tokens controller.")
    Path privateKeyFile;

    @Option(names = "--root-ca-file", paramLabel = "FILE",
            description = "PEM CA bundle put in token Secrets (ca.crt) and in every kube-root-ca.crt ConfigMap; "
                    + "default in a pod: " + "/var/run/secrets/kubernetes.io/serviceaccount/ca.crt.")
    Path rootCaFile;

    @Option(names = "--legacy-token-auto-create", defaultValue = "false",
            description = "Create a <sa>-token-xxxxx Secret for every ServiceAccount and list it in .secrets, as "
                    + "Kubernetes 1.17 did (default: ${DEFAULT-VALUE}, the 1.30 behaviour).")
    boolean legacyTokenAutoCreate;

    @Option(names = "--concurrent-syncs", paramLabel = "N", defaultValue = "5",
            description = "Workers per controller queue (default: ${DEFAULT-VALUE}).")
    int concurrentSyncs;

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

    @Option(names = "--webhook-address", paramLabel = "HOST:PORT",
            description = "Serve the admission webhook (HTTPS) here, e.g. 0.0.0.0:9443; off when not given.")
    String webhookAddress;

    @Option(names = "--tls-cert-file", paramLabel = "FILE",
            description = "PEM serving certificate (chain) of the webhook; re-read when it changes.")
    Path tlsCertFile;

    @Option(names = "--tls-private-key-file", paramLabel = "FILE",
            description = "PEM private key of --tls-cert-file (PKCS#1, PKCS#8 or SEC1); re-read when it changes.")
    Path tlsKeyFile;

    @Option(names = "--client-ca-file", paramLabel = "FILE",
            description = "PEM CA certificate(s): the webhook then requires a client certificate signed by one "
                    + "(the API server's, from its AdmissionConfiguration kubeconfig); re-read when it changes. "
                    + "Not given: any client may call the webhook.")
    Path clientCaFile;

    @Option(names = "--admission-token-volume", paramLabel = "projected|secret", defaultValue = "projected",
            description = "Token volume the webhook mounts: 'projected' (kube-api-access-*, Kubernetes 1.30) or "
                    + "'secret' (the ServiceAccount's token Secret, Kubernetes 1.17) (default: ${DEFAULT-VALUE}).")
    String admissionTokenVolume;

    @Option(names = "--admission-limit-secret-references", defaultValue = "false",
            description = "Enforce mountable secrets for every ServiceAccount, not only those annotated "
                    + "kubernetes.io/enforce-mountable-secrets=true (default: ${DEFAULT-VALUE}).")
    boolean limitSecretReferences;

    @Option(names = "--agent-service-account", paramLabel = "NAMESPACE/NAME",
            description = "The node agents' ServiceAccount: its token requests are confined to pods on the "
                    + "requesting agent's node. Required while --webhooks serves serviceaccount-token.")
    String agentServiceAccount;

    @Option(names = "--webhooks", paramLabel = "LIST", defaultValue = AdmissionWebhook.ALL_WEBHOOKS,
            description = "Webhook paths to serve: pods (/mutate/pods), serviceaccount-token "
                    + "(/validate/serviceaccount-token); the others answer 404 (default: ${DEFAULT-VALUE}).")
    String webhooks;

    @Option(names = "--api-audiences", paramLabel = "LIST", split = ",",
            description = "The API server's --api-audiences, which it gives a token request that names none: what an "
                    + "agent volume without an audience asks for. Default: the aud claim of the in-cluster token "
                    + "(/var/run/secrets/kubernetes.io/serviceaccount/token).")
    List<String> apiAudiences;

    @Override
    public Integer call() throws Exception {
        logs.apply();
        Checked checked = check();
        ApiClient client = KubeClients.fromFlags(clientAndMetrics.kubeconfig());
        startLog.info(StartupLine.of(spec.root().name(), BuildVersion.current(), client.getBasePath()));
        ApiClient watchClient = KubeClients.fromFlags(clientAndMetrics.kubeconfig());
        watchClient.setReadTimeout(0); // a watch is one long request
        ControlplaneRuntime.LeaderElection election = leaderElect
                ? new ControlplaneRuntime.LeaderElection(leaderElectNamespace, leaderElectName, identity(),
                        leaseDuration, renewDeadline, retryPeriod)
                : null;
        ControlplaneRuntime runtime = new ControlplaneRuntime(new ControlplaneRuntime.Settings(checked.controllers(),
                checked.signer(), checked.rootCa(), legacyTokenAutoCreate, concurrentSyncs, checked.metricsAddress(),
                election, checked.webhook()), client, watchClient);
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
        Set<String> selected = attempt(errors, () -> ControllerSelection.parse(controllers));
        InetSocketAddress address = clientAndMetrics.metricsAddress(errors);
        if (concurrentSyncs < 1) {
            errors.add("--concurrent-syncs must be at least 1, got " + concurrentSyncs);
        }
        // checked with --no-leader-elect too: a later --leader-elect must not find them broken
        if (!(leaseDuration.compareTo(renewDeadline) > 0 && renewDeadline.compareTo(retryPeriod) > 0)) {
            errors.add("leader election needs lease duration > renew deadline > retry period, got "
                    + leaseDuration + " > " + renewDeadline + " > " + retryPeriod);
        }
        boolean tokens = selected != null && selected.contains(TokensController.NAME);
        if (tokens && privateKeyFile == null) {
            errors.add("the tokens controller needs --service-account-private-key-file"
                    + " (or leave it out: --controllers=*,-tokens)");
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
        byte[] rootCa = caFile == null ? new byte[0] : attempt(errors, () -> RootCaBundle.load(caFile));
        if (caFile == null && selected != null && selected.contains(RootCaPublisher.NAME)) {
            errors.add("the root-ca controller needs --root-ca-file (or leave it out: --controllers=*,-root-ca)");
        }
        AdmissionWebhook.Settings webhook = webhookSettings(errors);
        if (selected != null && selected.isEmpty() && webhookAddress == null) {
            errors.add("--controllers selects no controller and --webhook-address is not given: nothing to run");
        }
        clientAndMetrics.checkKubeconfig(errors);
        UsageErrors.throwIfAny(spec.commandLine(), errors);
        return new Checked(selected, address, tokens ? signer : null, rootCa, webhook);
    }

    /**
     * The webhook's settings, or null when {@code --webhook-address} is not given; its flags are checked and
     * its files read either way.
     */
    private AdmissionWebhook.Settings webhookSettings(List<String> errors) {
        boolean on = webhookAddress != null;
        if (!on && clientCaFile != null) {
            errors.add("--client-ca-file needs --webhook-address");
        }
        if (!on && (tlsCertFile != null || tlsKeyFile != null || agentServiceAccount != null)) {
            errors.add("--tls-cert-file, --tls-private-key-file and --agent-service-account need --webhook-address");
        }
        if (on && (tlsCertFile == null || tlsKeyFile == null)) {
            errors.add("--webhook-address needs --tls-cert-file and --tls-private-key-file (the webhook serves HTTPS only)");
        }
        ServiceAccountAdmission.TokenVolume volume = switch (admissionTokenVolume) {
            case "projected" -> ServiceAccountAdmission.TokenVolume.PROJECTED;
            case "secret" -> ServiceAccountAdmission.TokenVolume.SECRET;
            default -> {
                errors.add("--admission-token-volume: expected projected or secret, got \"" + admissionTokenVolume + "\"");
                yield null;
            }
        };
        InetSocketAddress address = on
                ? attempt(errors, () -> HealthServer.parseAddress("--webhook-address", webhookAddress)) : null;
        if (agentServiceAccount != null) {
            attempt(errors, () -> {
                AdmissionWebhook.checkAgentServiceAccount(agentServiceAccount);
                return agentServiceAccount;
            });
        }
        Set<String> served = attempt(errors, () -> AdmissionWebhook.parseWebhooks(webhooks));
        if (apiAudiences != null) {
            attempt(errors, () -> AdmissionWebhook.checkApiAudiences(apiAudiences));
        }
        ServingCertificate certificate = null;
        if (tlsCertFile != null && tlsKeyFile != null) {
            certificate = attempt(errors, () -> ServingCertificate.load(tlsCertFile, tlsKeyFile, clientCaFile));
        } else {
            readable("--tls-cert-file", tlsCertFile, errors);
            readable("--tls-private-key-file", tlsKeyFile, errors);
            readable("--client-ca-file", clientCaFile, errors);
        }
        if (on && served != null) {
            // no fail-open: serviceaccount-token without --agent-service-account is refused
            attempt(errors, () -> {
                AdmissionWebhook.checkSelection(served, agentServiceAccount);
                return served;
            });
        }
        if (!on || !errors.isEmpty()) {
            return null; // off, or the errors stop run
        }
        return new AdmissionWebhook.Settings(address, certificate, volume, limitSecretReferences, agentServiceAccount,
                WebhookServer.Limits.defaults(), served, apiAudiences);
    }

    /** A file given to a part that cannot load it (a certificate without its key): at least it must be readable. */
    private static void readable(String flag, Path file, List<String> errors) {
        if (file != null && !Files.isReadable(file)) {
            errors.add(flag + " " + file + ": not found or not readable");
        }
    }

    /** The check's result, or null with its message added to {@code errors}. */
    private static <T> T attempt(List<String> errors, Supplier<T> check) {
        try {
            return check.get();
        } catch (IllegalArgumentException e) {
            errors.add(e.getMessage());
            return null;
        }
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
