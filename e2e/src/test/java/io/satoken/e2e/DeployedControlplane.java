package io.satoken.e2e;

import io.kubernetes.client.openapi.models.V1Deployment;
import io.satoken.common.testing.KubeApiServer;
import io.satoken.controlplane.testing.DeployedManifests;
import java.io.IOException;
import java.nio.file.Path;
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
 * API server's CA as {@code --root-ca-file} where the pod would use its mounted {@code ca.crt}.
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

    /** A started Deployment: the process, and the loopback addresses its {@code 0.0.0.0} ports became. */
    record Started(Workload workload, SatokenProcess process, Map<String, String> addresses) {
        String address(String flag) {
            return addresses.get(flag);
        }

        int port(String flag) {
            String a = address(flag);
            return Integer.parseInt(a.substring(a.lastIndexOf(':') + 1));
        }
    }

    private DeployedControlplane() {
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

    /**
     * Starts {@code workload} as a process. {@code files} maps each path the pod mounts (a flag's value,
     * e.g. {@code /etc/satoken/webhook-tls/tls.crt}) to the local file standing in for it; an arg naming a
     * mounted path missing from it fails the test.
     */
    static Started start(KubeApiServer server, Workload workload, Path work, Map<String, Path> files, Path rootCa)
            throws Exception {
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
        SatokenProcess process = SatokenProcess.controlplane("security-" + workload.name(), args, metrics, Map.of());
        return new Started(workload, process, addresses);
    }
}
