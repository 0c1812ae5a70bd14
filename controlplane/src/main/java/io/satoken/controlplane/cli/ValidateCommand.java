package io.satoken.controlplane.cli;

import java.util.TreeSet;
import picocli.CommandLine.Command;

/**
 * {@code satoken-controlplane validate [run's flags]}: the checks {@code run} makes before it starts, and
 * nothing else. Every flag is checked, those of disabled parts too; every key, certificate, CA and kubeconfig
 * file given is read and parsed; no cluster is contacted. Takes exactly {@code run}'s flags (it inherits
 * them), so a Deployment's arguments can be checked by changing only the command's name.
 */
@Command(name = "validate",
        description = {"Check run's flags and files without contacting a cluster: every flag, those of disabled "
                + "parts too, and every key, certificate, CA and kubeconfig file given.",
                "Exit codes: 0 all valid (one line says what run would start), 2 one line per error."},
        footerHeading = "%nExamples:%n",
        footer = { // laid out by ExampleFooter
            "# The controllers' flags and files, without contacting the cluster",
            "satoken-controlplane validate --service-account-private-key-file=/etc/kubernetes/pki/sa.key"
                    + " --root-ca-file=/etc/kubernetes/pki/ca.crt --kubeconfig=/etc/satoken/controlplane.kubeconfig",
            "# The webhook's flags: the serving certificate and key must be a pair",
            "satoken-controlplane validate --controllers=-* --leader-elect=false --webhook-address=0.0.0.0:9443"
                    + " --tls-cert-file=tls.crt --tls-private-key-file=tls.key"
                    + " --agent-service-account=satoken-system/satoken-agent"})
final class ValidateCommand extends RunCommand {

    @Override
    public Integer call() {
        Checked checked = check();
        spec.commandLine().getOut().println("OK: controllers " + (checked.controllers().isEmpty() ? "none"
                : String.join(",", checked.controllers())) + "; webhook " + (checked.webhook() == null ? "off"
                : "on " + webhook.address + " (" + String.join(",", new TreeSet<>(checked.webhook().webhooks())) + ")")
                + "; leader election " + (leaderElect ? "on" : "off"));
        return 0;
    }
}
