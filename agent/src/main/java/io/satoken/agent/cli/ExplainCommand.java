package io.satoken.agent.cli;

import io.satoken.agent.config.AgentConfig;
import io.satoken.agent.config.AgentConfigParser;
import io.satoken.agent.config.InvalidConfigException;
import io.satoken.agent.status.StatusEndpoint;
import io.satoken.agent.status.StatusView;
import io.satoken.common.cli.DurationConverter;
import io.satoken.common.health.UnixSocketClient;
import io.satoken.common.kube.KubeNames;
import java.io.IOException;
import java.io.PrintWriter;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.Callable;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/**
 * {@code satoken-agent explain --config FILE NAMESPACE/NAME | PATH}: asks the agent running with that config, through
 * its local status endpoint ({@link StatusEndpoint}), what it keeps for one pod or one static projection: each file's
 * ServiceAccount, audiences and bound object, its token's issue and expiry times, the next refresh, the last error
 * and the last read seen. Never a token: the endpoint has none to give.
 */
@Command(
        name = "explain",
        mixinStandardHelpOptions = true,
        description = {"Shows what the running agent keeps for a pod (NAMESPACE/NAME) or a static projection "
                + "(its dir or file): ServiceAccount, audiences, bound object, issue and expiry times, next refresh, "
                + "last error, last read. Never a token.",
                "Reads the agent's status endpoint, the Unix socket named by statusSocket in the config."},
        exitCodeListHeading = "%nExit codes:%n",
        exitCodeList = {"0:shown", "1:the agent cannot be asked, or keeps nothing for the target", "2:bad usage"},
        footerHeading = "%nExamples:%n",
        footer = {
            "  # A pod on this agent's node; from a workstation, for any node:",
            "  # kubectl satoken explain shop/cart-7d9f",
            "  satoken-agent explain --config /etc/satoken/agent.yaml shop/cart-7d9f",
            "  # A static projection, by its file or directory, as JSON",
            "  satoken-agent explain --config /etc/satoken/agent.yaml -o json \\",
            "      /run/satoken/node-exporter/token"})
final class ExplainCommand implements Callable<Integer> {

    enum Output { text, json }

    @CommandLine.Spec
    CommandLine.Model.CommandSpec spec;

    @Option(names = "--config", required = true, paramLabel = "FILE", description = "The running agent's YAML config.")
    Path config;

    @Option(names = {"-o", "--output"}, defaultValue = "text", paramLabel = "FORMAT",
            description = "text (default) or json.")
    Output output;

    @Option(names = "--timeout", defaultValue = "5s", paramLabel = "DURATION",
            converter = DurationConverter.class,
            description = "How long to wait for the agent's answer (default: ${DEFAULT-VALUE}).")
    Duration timeout;

    @Parameters(index = "0", paramLabel = "TARGET",
            description = "NAMESPACE/NAME of a pod, or the absolute path of a static projection's dir or file.")
    String target;

    @Override
    public Integer call() throws IOException {
        PrintWriter out = spec.commandLine().getOut();
        PrintWriter err = spec.commandLine().getErr();
        String path = requestPath();
        AgentConfig parsed;
        try {
            parsed = AgentConfigParser.parse(config);
        } catch (InvalidConfigException e) {
            throw new CommandLine.ParameterException(spec.commandLine(), e.getMessage());
        }
        if (parsed.statusSocket().isEmpty()) {
            err.println(spec.qualifiedName() + ": " + config + " sets no statusSocket, so the agent serves no status endpoint; add "
                    + "statusSocket: /run/satoken/agent-status.sock and restart it");
            return 1;
        }
        Path socket = parsed.statusSocket().get();
        UnixSocketClient.Reply reply;
        try {
            reply = UnixSocketClient.get(socket, path, timeout);
        } catch (IOException e) {
            err.println(spec.qualifiedName() + ": cannot ask the agent at " + socket + ": " + e.getMessage()
                    + " (is it running with this config? explain needs root or the agent's user)");
            return 1;
        }
        if (reply.status() != 200) {
            err.println(spec.qualifiedName() + ": " + reply.body().strip());
            return 1;
        }
        StatusView view = StatusView.parse(reply.body());
        if (target.startsWith("/")) {
            view = view.staticAt(Path.of(target).normalize());
            if (view.isEmpty()) {
                err.println(spec.qualifiedName() + ": the agent keeps no static projection at " + target);
                return 1;
            }
        }
        out.print(output == Output.json ? view.json() + System.lineSeparator() : view.text());
        out.flush();
        return 0;
    }

    /** The endpoint's path for the target; a malformed target is bad usage. */
    private String requestPath() {
        if (target.startsWith("/")) {
            return StatusEndpoint.DIRECTORIES;
        }
        String[] parts = target.split("/", -1);
        if (parts.length != 2) {
            throw new CommandLine.ParameterException(spec.commandLine(),
                    "TARGET " + target + ": must be NAMESPACE/NAME or an absolute path");
        }
        Optional<String> problem = KubeNames.dnsLabelProblem(parts[0])
                .map(p -> "namespace " + p).or(() -> KubeNames.dnsSubdomainProblem(parts[1]).map(p -> "name " + p));
        if (problem.isPresent()) {
            throw new CommandLine.ParameterException(spec.commandLine(), "TARGET " + target + ": " + problem.get());
        }
        return StatusEndpoint.PODS + parts[0] + "/" + parts[1];
    }
}
