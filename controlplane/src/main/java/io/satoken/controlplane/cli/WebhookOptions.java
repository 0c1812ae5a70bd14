package io.satoken.controlplane.cli;

import io.satoken.common.cli.DurationConverter;
import io.satoken.common.cli.UsageErrors;
import io.satoken.common.health.HealthServer;
import io.satoken.controlplane.admission.NodeTokenRestriction;
import io.satoken.controlplane.https.ServingCertificate;
import io.satoken.controlplane.https.WebhookServer;
import io.satoken.controlplane.runtime.AdmissionWebhook;
import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import picocli.CommandLine.Option;

/**
 * The admission webhook's flags of {@code satoken-controlplane run} (a picocli mixin), checked into the webhook's
 * {@link AdmissionWebhook.Settings}: off unless {@code --webhook-address} is given, its flags checked either way.
 */
final class WebhookOptions {

    @Option(names = "--webhook-address", paramLabel = "HOST:PORT",
            description = "Serve the admission webhook (HTTPS) here, e.g. 0.0.0.0:9443; off when not given.")
    String address;

    @Option(names = "--tls-cert-file", paramLabel = "FILE",
            description = "PEM serving certificate (chain) of the webhook; re-read when it changes.")
    Path tlsCertFile;

    @Option(names = "--tls-private-key-file", paramLabel = "FILE",
            description = "PEM private key of --tls-cert-file (PKCS#1, PKCS#8 or SEC1); re-read when it changes.")
    Path tlsKeyFile;

    @Option(names = "--client-ca-file", paramLabel = "FILE",
            description = """
                    PEM CA certificate(s): the webhook then requires a client certificate signed by one \
                    (the API server's, from its AdmissionConfiguration kubeconfig); re-read when it changes. \
                    The webhook Deployment gives it. Not given: any client that reaches the port may call the \
                    webhook (a warning is logged).""")
    Path clientCaFile;

    @Option(names = "--admission-limit-secret-references", defaultValue = "false",
            description = """
                    Enforce mountable secrets for every ServiceAccount, not only those annotated \
                    kubernetes.io/enforce-mountable-secrets=true (default: ${DEFAULT-VALUE}).""")
    boolean limitSecretReferences;

    @Option(names = "--agent-service-account", paramLabel = "NAMESPACE/NAME",
            description = """
                    The node agents' ServiceAccount: \
                    its token requests are confined to pods on the requesting agent's node. \
                    Required while --webhooks serves serviceaccount-token.""")
    String agentServiceAccount;

    @Option(names = "--webhook-drain-delay", paramLabel = "DURATION", defaultValue = "5s",
            converter = DurationConverter.class,
            description = """
                    On SIGTERM the webhook turns unready at once, answers new connections for this long \
                    (each answer closing its connection) while the endpoint leaves the Service, then stops \
                    accepting and finishes the reviews in progress (default: ${DEFAULT-VALUE}).""")
    Duration drainDelay;

    @Option(names = "--webhook-reuse-port", defaultValue = "false",
            description = """
                    Bind the webhook's port with SO_REUSEPORT, so that during a rolling update two replicas \
                    on the host's network of one node can listen at once (default: ${DEFAULT-VALUE}). Only for \
                    hostNetwork pods; any process of the same user may then share the port.""")
    boolean reusePort;

    @Option(names = "--webhooks", paramLabel = "LIST", defaultValue = AdmissionWebhook.ALL_WEBHOOKS,
            description = """
                    Webhook paths to serve: pods (/mutate/pods), serviceaccount-token \
                    (/validate/serviceaccount-token), agent-tokens (/mutate/pods/agent-tokens: the agent's token \
                    volume without ServiceAccount admission); the others answer 404 (default: ${DEFAULT-VALUE}).""")
    String webhooks;

    @Option(names = "--api-audiences", paramLabel = "LIST", split = ",",
            description = """
                    The API server's --api-audiences, which it gives a token request that names none: what an \
                    agent volume without an audience asks for. Default: the aud claim of the in-cluster token \
                    (/var/run/secrets/kubernetes.io/serviceaccount/token).""")
    List<String> apiAudiences;

    /**
     * The webhook's settings, or null when {@code --webhook-address} is not given; its flags are checked and
     * its files read either way.
     */
    AdmissionWebhook.Settings settings(List<String> errors) {
        boolean on = address != null;
        if (!on && clientCaFile != null) {
            errors.add("--client-ca-file needs --webhook-address");
        }
        if (!on && (tlsCertFile != null || tlsKeyFile != null || agentServiceAccount != null)) {
            errors.add("--tls-cert-file, --tls-private-key-file and --agent-service-account need --webhook-address");
        }
        if (on && (tlsCertFile == null || tlsKeyFile == null)) {
            errors.add("--webhook-address needs --tls-cert-file and --tls-private-key-file (the webhook serves HTTPS only)");
        }
        InetSocketAddress socketAddress = on
                ? UsageErrors.attempt(errors, () -> HealthServer.parseAddress("--webhook-address", address)) : null;
        if (agentServiceAccount != null) {
            UsageErrors.attempt(errors, () -> {
                checkAgentServiceAccount(agentServiceAccount);
                return agentServiceAccount;
            });
        }
        Set<String> served = UsageErrors.attempt(errors, () -> parseWebhooks(webhooks));
        if (apiAudiences != null) {
            UsageErrors.attempt(errors, () -> checkApiAudiences(apiAudiences));
        }
        ServingCertificate certificate = null;
        if (tlsCertFile != null && tlsKeyFile != null) {
            certificate = UsageErrors.attempt(errors,
                    () -> ServingCertificate.load(tlsCertFile, tlsKeyFile, clientCaFile));
        } else {
            readable("--tls-cert-file", tlsCertFile, errors);
            readable("--tls-private-key-file", tlsKeyFile, errors);
            readable("--client-ca-file", clientCaFile, errors);
        }
        if (drainDelay.isNegative()) {
            errors.add("--webhook-drain-delay must not be negative, got " + drainDelay);
        }
        if (on && served != null) {
            // no fail-open: serviceaccount-token without --agent-service-account is refused
            UsageErrors.attempt(errors, () -> {
                checkSelection(served, agentServiceAccount);
                return served;
            });
        }
        if (!on || !errors.isEmpty()) {
            return null; // off, or the errors stop run
        }
        return new AdmissionWebhook.Settings(socketAddress, certificate, limitSecretReferences,
                agentServiceAccount, WebhookServer.Limits.defaults(), served, apiAudiences, drainDelay, reusePort);
    }

    /**
     * Checks an {@code --agent-service-account} value.
     *
     * @throws IllegalArgumentException naming the flag and the expected form
     */
    static void checkAgentServiceAccount(String value) {
        NodeTokenRestriction.AgentAccount.parse("--agent-service-account", value);
    }

    /**
     * Checks {@code --api-audiences}: a non-empty list without blank entries.
     *
     * @return the list
     * @throws IllegalArgumentException naming the flag
     */
    static List<String> checkApiAudiences(List<String> apiAudiences) {
        if (apiAudiences.isEmpty() || apiAudiences.stream().anyMatch(String::isBlank)) {
            throw new IllegalArgumentException("--api-audiences: expected a comma-separated list of audiences, got "
                    + apiAudiences);
        }
        return apiAudiences;
    }

    /**
     * Parses {@code --webhooks}: a comma-separated list of {@link AdmissionWebhook#WEBHOOKS} names.
     *
     * @throws IllegalArgumentException naming the flag and the unknown or missing name
     */
    static Set<String> parseWebhooks(String value) {
        Set<String> names = new TreeSet<>();
        for (String name : value.split(",", -1)) {
            String trimmed = name.trim();
            if (!AdmissionWebhook.WEBHOOKS.containsKey(trimmed)) {
                throw new IllegalArgumentException("--webhooks: unknown webhook \"" + trimmed + "\"; the webhooks are "
                        + String.join(", ", new TreeSet<>(AdmissionWebhook.WEBHOOKS.keySet())));
            }
            names.add(trimmed);
        }
        return names;
    }

    /**
     * No fail-open: serving serviceaccount-token needs the agents' ServiceAccount, without which no token
     * request could be confined.
     *
     * @throws IllegalArgumentException naming both flags
     */
    static void checkSelection(Set<String> webhooks, String agentServiceAccount) {
        if (webhooks.contains("serviceaccount-token") && agentServiceAccount == null) {
            throw new IllegalArgumentException("--webhooks serves serviceaccount-token, which needs "
                    + "--agent-service-account NAMESPACE/NAME (the node agents' ServiceAccount, whose token requests "
                    + "it confines); give it, or serve only the pod webhook: --webhooks=pods");
        }
    }

    /** A file given to a part that cannot load it (a certificate without its key): at least it must be readable. */
    private static void readable(String flag, Path file, List<String> errors) {
        if (file != null && !Files.isReadable(file)) {
            errors.add(flag + " " + file + ": not found or not readable");
        }
    }
}
