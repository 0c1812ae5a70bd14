package io.satoken.common.cli;

import io.kubernetes.client.openapi.ApiClient;
import io.satoken.common.kube.KubeClients;
import java.io.IOException;
import java.util.List;
import org.slf4j.Logger;
import picocli.CommandLine;

/**
 * What the two programs' {@code run} commands share: the log flags, {@code --kubeconfig} and
 * {@code --metrics-address}, the end of the flag check, and the start that logs which program talks to which API
 * server ({@link StartupLine}). A subclass adds its own flags and runs.
 */
public abstract class ClusterCommand {

    @CommandLine.Spec
    protected CommandLine.Model.CommandSpec spec;

    @CommandLine.Mixin
    protected LogOptions logs;

    @CommandLine.Mixin
    protected ClientAndMetricsOptions clientAndMetrics;

    /** @param defaultMetricsAddress where {@code /metrics} and the probes listen when the flag is not given */
    protected ClusterCommand(String defaultMetricsAddress) {
        this.clientAndMetrics = new ClientAndMetricsOptions(defaultMetricsAddress);
    }

    /** Ends a flag check: adds what is wrong with {@code --kubeconfig}, then throws every error found, if any. */
    protected final void throwIfAny(List<String> errors) {
        clientAndMetrics.checkKubeconfig(errors);
        UsageErrors.throwIfAny(spec.commandLine(), errors);
    }

    /** A client of the API server the flags name, after the start line has said which one it is. */
    protected final ApiClient startClient(Logger log) throws IOException {
        ApiClient client = client();
        log.info(StartupLine.of(spec.root().name(), BuildVersion.current(), client.getBasePath()));
        return client;
    }

    /** Another client of the same API server, for traffic kept apart from the first's. */
    protected final ApiClient client() throws IOException {
        return KubeClients.fromFlags(clientAndMetrics.kubeconfig());
    }
}
