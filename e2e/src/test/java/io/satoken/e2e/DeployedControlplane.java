package io.satoken.e2e;

import io.kubernetes.client.openapi.models.V1Container;
import io.kubernetes.client.openapi.models.V1Deployment;
import io.kubernetes.client.util.Yaml;
import io.satoken.common.testing.KubeApiServer;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

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

    /** One Deployment of {@code controlplane/deploy}: its file, name, ServiceAccount and container args. */
    record Workload(Path file, String namespace, String name, String serviceAccount, List<String> args) {
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
        List<Workload> found = new ArrayList<>();
        try (Stream<Path> files = Files.list(DEPLOY)) {
            for (Path file : files.filter(f -> f.toString().endsWith(".yaml")).sorted().toList()) {
                for (Object o : Yaml.loadAll(file.toFile())) {
                    if (o instanceof V1Deployment d) {
                        V1Container c = d.getSpec().getTemplate().getSpec().getContainers().get(0);
                        found.add(new Workload(file, d.getMetadata().getNamespace(), d.getMetadata().getName(),
                                d.getSpec().getTemplate().getSpec().getServiceAccountName(), List.copyOf(c.getArgs())));
                    }
                }
            }
        }
        return found;
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
        List<String> args = new ArrayList<>();
        for (String arg : workload.args()) {
            int eq = arg.indexOf('=');
            if (eq < 0) {
                args.add(arg);
                continue;
            }
            String flag = arg.substring(0, eq);
            String value = arg.substring(eq + 1);
            Matcher any = ANY_ADDRESS.matcher(value);
            if (any.matches()) {
                value = "127.0.0.1:" + E2E.freePort();
                addresses.put(flag, value);
            } else if (value.startsWith("/")) {
                Path local = files.get(value);
                if (local == null) {
                    throw new IllegalStateException(workload.name() + ": no local file for " + arg);
                }
                value = local.toString();
            }
            args.add(flag + "=" + value);
        }
        args.add("--kubeconfig=" + kubeconfig);
        if (workload.runsControllers() && args.stream().noneMatch(a -> a.startsWith("--root-ca-file"))) {
            args.add("--root-ca-file=" + rootCa);
        }
        String metrics = addresses.get("--metrics-address");
        SatokenProcess process = SatokenProcess.controlplane("security-" + workload.name(), args, metrics, Map.of());
        return new Started(workload, process, addresses);
    }
}
