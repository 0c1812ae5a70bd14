package io.satoken.e2e;

import io.kubernetes.client.openapi.models.V1Deployment;
import io.satoken.common.testing.KubeApiServer;
import io.satoken.controlplane.testing.ApiServerClientCertificate;
import io.satoken.controlplane.testing.DeployedManifests;
import io.satoken.controlplane.webhook.TestCertificates;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Pattern;

/**
 * The control plane as {@code controlplane/deploy} runs it, started as local processes: each Deployment's
 * container args, with only what a process outside a pod must change. Files the pod mounts become local
 * files, {@code 0.0.0.0:PORT} becomes a free loopback port, and the process gets a kubeconfig holding a
 * token of the Deployment's own ServiceAccount (so it has exactly the RBAC the manifests give it) and the
 * API server's CA as {@code --root-ca-file} where the pod would use its mounted {@code ca.crt}. With
 * {@code legacyTokens}, the controllers run as the opt-in Component {@code legacy-tokens/} leaves them: the
 * tokens controller named, the signing key given, and the Component's RBAC applied.
 */
final class DeployedControlplane {

    static final Path DEPLOY = E2E.repo().resolve("controlplane/deploy");
    private static final Pattern ANY_ADDRESS = Pattern.compile("0\\.0\\.0\\.0:\\d+");

    /** One Deployment of {@code controlplane/deploy}: its namespace, name, ServiceAccount and container args. */
    record Workload(String namespace, String name, String serviceAccount, List<String> args, V1Deployment deployment) {
        boolean servesWebhook() {
            return args.stream().anyMatch(a -> a.startsWith("--webhook-address"));
        }

        boolean runsControllers() {
            return args.stream().noneMatch(a -> a.equals("--controllers=") || a.equals("--controllers=-*"));
        }
    }

    /**
     * A started Deployment: the process, the args it was started with (to start it again), and the loopback
     * addresses its {@code 0.0.0.0} ports became.
     */
    record Started(Workload workload, SatokenProcess process, List<String> args, Map<String, String> addresses) {
        String address(String flag) {
            return addresses.get(flag);
        }

        int port(String flag) {
            String a = address(flag);
            return Integer.parseInt(a.substring(a.lastIndexOf(':') + 1));
        }
    }

    /** The controllers' and the webhook's Deployments, started; the same one twice where one Deployment does both. */
    record Running(Started controllers, Started webhook) {
    }

    private DeployedControlplane() {
    }

    /** Applies the namespaces ({@code 00-*}) and the RBAC of {@code controlplane/deploy}: what its processes need. */
    static void applyNamespacesAndRbac(Kubectl kubectl) throws IOException, InterruptedException {
        applyNamespacesAndRbac(kubectl, false);
    }

    /** As {@link #applyNamespacesAndRbac(Kubectl)}, with the Component {@code legacy-tokens/}'s RBAC too. */
    static void applyNamespacesAndRbac(Kubectl kubectl, boolean legacyTokens) throws IOException, InterruptedException {
        try (var files = Files.list(DEPLOY)) {
            for (Path f : files.filter(f -> f.toString().endsWith(".yaml")).sorted().toList()) {
                String name = f.getFileName().toString();
                if (name.startsWith("00-") || name.contains("rbac")) {
                    kubectl.apply(f);
                }
            }
        }
        if (legacyTokens) {
            kubectl.apply(DEPLOY.resolve(DeployedManifests.LEGACY_TOKENS).resolve("rbac.yaml"));
        }
    }

    /**
     * The files the Deployments mount, each mapped to its local stand-in: the webhook TLS pair, the CA of the API
     * server's client certificate, the signing key.
     */
    static Map<String, Path> mountedFiles(TestCertificates.Pair tls, ApiServerClientCertificate clientCertificate,
            Path signingKey) {
        return Map.of(
                "/etc/satoken/webhook-tls/tls.crt", tls.cert(),
                "/etc/satoken/webhook-tls/tls.key", tls.key(),
                ApiServerClientCertificate.MOUNTED_CA, clientCertificate.ca().cert(),
                "/etc/satoken/signing-key/sa.key", signingKey);
    }

    /**
     * Starts the controllers' and the webhook's Deployments (their logs named {@code prefix} and the
     * Deployment's name), waits until both are ready, and registers the webhook configurations to reach the
     * webhook by its loopback URL with {@code caBundle}.
     */
    static Running startAll(String prefix, KubeApiServer server, Path work, Map<String, Path> files, Path rootCa,
            byte[] caBundle, Duration wait) throws Exception {
        return startAll(prefix, server, work, files, rootCa, caBundle, wait, false);
    }

    /** As above; with {@code legacyTokens} the controllers run with the Component {@code legacy-tokens/}. */
    static Running startAll(String prefix, KubeApiServer server, Path work, Map<String, Path> files, Path rootCa,
            byte[] caBundle, Duration wait, boolean legacyTokens) throws Exception {
        Workload controllersWorkload = legacyTokens ? withLegacyTokens(controllers()) : controllers();
        Started controllers = start(prefix, server, controllersWorkload, work, files, rootCa);
        Started webhook = null;
        try {
            Workload webhookWorkload = webhook();
            webhook = webhookWorkload.name().equals(controllers.workload().name()) ? controllers
                    : start(prefix, server, webhookWorkload, work, files, rootCa);
            controllers.process().awaitReady(wait);
            webhook.process().awaitReady(wait);
            DeployedManifests.registerWebhooks(server.adminClient(), DEPLOY,
                    "https://127.0.0.1:" + webhook.port("--webhook-address"), caBundle);
            return new Running(controllers, webhook);
        } catch (Exception | Error e) {
            if (webhook != null) {
                webhook.process().close();
            }
            controllers.process().close();
            throw e;
        }
    }

    /** Every Deployment in {@code controlplane/deploy} (not its examples). */
    static List<Workload> workloads() throws IOException {
        return DeployedManifests.deployments(DEPLOY).stream().map(d -> new Workload(d.getMetadata().getNamespace(),
                d.getMetadata().getName(), d.getSpec().getTemplate().getSpec().getServiceAccountName(),
                DeployedManifests.args(d), d)).toList();
    }

    /** The Deployment that serves the admission webhook. */
    static Workload webhook() throws IOException {
        return workloads().stream().filter(Workload::servesWebhook).findFirst().orElseThrow();
    }

    /** The Deployment that runs the controllers. */
    static Workload controllers() throws IOException {
        List<Workload> all = workloads();
        return all.stream().filter(w -> w.runsControllers() && !w.servesWebhook()).findFirst()
                .orElseGet(() -> all.stream().filter(Workload::runsControllers).findFirst().orElseThrow());
    }

    /** {@code controllers} with the args the Component {@code legacy-tokens/} leaves them. */
    static Workload withLegacyTokens(Workload controllers) throws IOException {
        List<String> args = DeployedManifests.withLegacyTokens(DEPLOY, controllers.deployment());
        controllers.deployment().getSpec().getTemplate().getSpec().getContainers().get(0).setArgs(new ArrayList<>(args));
        return new Workload(controllers.namespace(), controllers.name(), controllers.serviceAccount(), args,
                controllers.deployment());
    }

    /**
     * Starts {@code workload} as a process. {@code files} maps each path the pod mounts (a flag's value,
     * e.g. {@code /etc/satoken/webhook-tls/tls.crt}) to the local file standing in for it; an arg naming a
     * mounted path missing from it fails the test.
     */
    static Started start(String prefix, KubeApiServer server, Workload workload, Path work, Map<String, Path> files,
            Path rootCa) throws Exception {
        Path kubeconfig = work.resolve(workload.name() + ".kubeconfig");
        server.writeKubeconfig(kubeconfig,
                IssuedTokens.record(server.serviceAccountToken(workload.namespace(), workload.serviceAccount())));
        Map<String, String> addresses = new LinkedHashMap<>();
        for (String arg : workload.args()) {
            int eq = arg.indexOf('=');
            if (eq > 0 && ANY_ADDRESS.matcher(arg.substring(eq + 1)).matches()) {
                addresses.put(arg.substring(0, eq), "127.0.0.1:" + E2E.freePort());
            }
        }
        List<String> args = new ArrayList<>(DeployedManifests.localArgs(workload.deployment(), files, addresses));
        args.add("--kubeconfig=" + kubeconfig);
        if (workload.runsControllers() && args.stream().noneMatch(a -> a.startsWith("--root-ca-file"))) {
            args.add("--root-ca-file=" + rootCa);
        }
        String metrics = addresses.get("--metrics-address");
        SatokenProcess process = SatokenProcess.controlplane(prefix + "-" + workload.name(), args, metrics, Map.of());
        return new Started(workload, process, List.copyOf(args), addresses);
    }
}
