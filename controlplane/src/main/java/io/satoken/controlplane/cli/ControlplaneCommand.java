package io.satoken.controlplane.cli;

import io.satoken.common.cli.BuildVersion;
import io.satoken.common.cli.ExitCodes;
import java.io.PrintWriter;
import picocli.CommandLine;
import picocli.CommandLine.Command;

/** {@code satoken-controlplane}: the control plane's command line. */
@Command(
        name = "satoken-controlplane",
        mixinStandardHelpOptions = true,
        versionProvider = BuildVersion.Provider.class,
        description = "Runs the ServiceAccount controllers (legacy tokens, default ServiceAccounts, kube-root-ca.crt,"
                + " ClusterRole aggregation) with leader election.",
        subcommands = {RunCommand.class, ValidateCommand.class, CommandLine.HelpCommand.class},
        footerHeading = "%nExamples:%n",
        footer = { // laid out by ExampleFooter
            "# Check the flags and files without a cluster, then run the controllers",
            "satoken-controlplane validate --service-account-private-key-file=/etc/kubernetes/pki/sa.key"
                    + " --root-ca-file=/etc/kubernetes/pki/ca.crt --kubeconfig=/etc/satoken/controlplane.kubeconfig",
            "satoken-controlplane run --service-account-private-key-file=/etc/kubernetes/pki/sa.key"
                    + " --root-ca-file=/etc/kubernetes/pki/ca.crt --kubeconfig=/etc/satoken/controlplane.kubeconfig",
            "# A command's flags and examples",
            "satoken-controlplane help run"})
public final class ControlplaneCommand implements Runnable {

    @CommandLine.Spec
    CommandLine.Model.CommandSpec spec;

    @Override
    public void run() {
        throw new CommandLine.ParameterException(spec.commandLine(), "a command is required (run, validate, help)");
    }

    public static void main(String[] args) {
        System.exit(execute(new PrintWriter(System.out, true), new PrintWriter(System.err, true), args));
    }

    /** Runs the command line in-process. Exit codes: 0 success, 1 the command failed, 2 bad usage. */
    public static int execute(PrintWriter out, PrintWriter err, String... args) {
        CommandLine cli = new CommandLine(new ControlplaneCommand());
        return ExitCodes.execute(cli, out, err, args);
    }
}
