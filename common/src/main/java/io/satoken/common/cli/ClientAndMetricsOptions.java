package io.satoken.common.cli;

import io.satoken.common.health.HealthServer;
import io.satoken.common.kube.KubeClients;
import java.net.InetSocketAddress;
import java.nio.file.Path;
import java.util.List;
import picocli.CommandLine.Option;

/**
 * {@code --kubeconfig} and {@code --metrics-address}, the flags both programs' {@code run} (and so {@code validate})
 * commands take to reach the API server and to serve health and metrics. Each program listens on its own port, so
 * the command gives the address's default: {@code @Mixin ClientAndMetricsOptions clientAndMetrics = new
 * ClientAndMetricsOptions("127.0.0.1:9810");} (picocli takes the field's value as the default and shows it).
 */
public final class ClientAndMetricsOptions {

    @Option(names = "--kubeconfig", paramLabel = "FILE",
            description = "Kubeconfig to use; default: in-cluster, then $KUBECONFIG, then ~/.kube/config.")
    Path kubeconfig;

    @Option(names = "--metrics-address", paramLabel = "HOST:PORT",
            description = "Where /healthz, /readyz and /metrics are served (default: ${DEFAULT-VALUE}).")
    String metricsAddress;

    /** The options with {@code --metrics-address} defaulting to {@code defaultMetricsAddress} (HOST:PORT). */
    public ClientAndMetricsOptions(String defaultMetricsAddress) {
        this.metricsAddress = defaultMetricsAddress;
    }

    /** The {@code --kubeconfig} file; null when not given (then {@link KubeClients#fromFlags} searches). */
    public Path kubeconfig() {
        return kubeconfig;
    }

    /** The parsed {@code --metrics-address}, or null with the error naming the flag added to {@code errors}. */
    public InetSocketAddress metricsAddress(List<String> errors) {
        return UsageErrors.attempt(errors, () -> HealthServer.parseAddress("--metrics-address", metricsAddress));
    }

    /** Reads a given {@code --kubeconfig} without using it ({@link KubeClients#check(Path, List)}). */
    public void checkKubeconfig(List<String> errors) {
        KubeClients.check(kubeconfig, errors);
    }
}
