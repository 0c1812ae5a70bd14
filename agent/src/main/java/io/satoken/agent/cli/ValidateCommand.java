package io.satoken.agent.cli;

import io.satoken.agent.config.AgentConfig;
import io.satoken.common.kube.KubeClients;
import java.util.Locale;
import picocli.CommandLine.Command;

/**
 * {@code satoken-agent validate --config FILE [run's other flags]}: the checks {@code run} makes before it
 * starts, and nothing else. The config is parsed by the same parser, every flag is checked, a {@code
 * --kubeconfig} file is parsed but not used; no cluster is contacted. Takes exactly {@code run}'s flags (it
 * inherits them), so a unit's or DaemonSet's arguments can be checked by changing only the command's name.
 */
@Command(name = "validate",
        description = {"Check the config and run's flags without contacting a cluster.",
                "Exit codes: 0 valid (one line says what run would start, and a warning if run would find no",
                "client configuration here), 2 one line per error."},
        footerHeading = "%nExamples:%n",
        footer = {
            "  # The systemd unit's arguments, with run changed to validate",
            "  satoken-agent validate --config /etc/satoken/agent.yaml \\",
            "      --kubeconfig /etc/satoken/kubeconfig",
            "  # A CSI-mode config, for a node",
            "  satoken-agent validate --config agent.yaml --node-name node-1"})
final class ValidateCommand extends RunCommand {

    @Override
    public Integer call() {
        AgentConfig parsed = check().config();
        int n = parsed.projections().size();
        spec.commandLine().getOut().println("OK: " + config + ": mode " + parsed.mode().name().toLowerCase(Locale.ROOT)
                + ", " + n + (n == 1 ? " static projection" : " static projections")
                + (parsed.mode().csi() ? ", CSI node " + nodeName + " under " + parsed.kubeletDir() : ""));
        // run would stop at its first API call: said, though validate contacts no cluster and the host may differ
        KubeClients.missing(clientAndMetrics.kubeconfig()).ifPresent(why -> spec.commandLine().getErr()
                .println(spec.qualifiedName() + ": warning: run would stop here: " + why));
        return 0;
    }
}
