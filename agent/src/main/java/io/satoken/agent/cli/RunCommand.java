package io.satoken.agent.cli;

import io.kubernetes.client.openapi.ApiClient;
import io.satoken.agent.config.AgentConfig;
import io.satoken.agent.config.AgentConfigParser;
import io.satoken.agent.config.InvalidConfigException;
import io.satoken.agent.runtime.AgentRuntime;
import io.satoken.agent.token.DeliveredTokens;
import io.satoken.agent.token.NodeImpersonation;
import io.satoken.agent.token.NodeImpersonationProbe;
import io.satoken.agent.token.TokenRequestSource;
import io.satoken.agent.token.TokenSource;
import io.satoken.common.cli.BuildVersion;
import io.satoken.common.cli.CleanExit;
import io.satoken.common.cli.ClusterCommand;
import io.satoken.common.cli.UsageErrors;
import io.satoken.common.kube.RateLimiter;
import io.satoken.common.paths.FileErrors;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.InstantSource;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * {@code satoken-agent run}: the agent on a real cluster, in CSI mode (DaemonSet), static mode (systemd)
 * or both, as the config file says. Runs until SIGTERM/SIGINT; exits 2 on a bad flag or config, with every
 * error found ({@link #check()}). {@link ValidateCommand} only checks.
 */
@Command(name = "run", mixinStandardHelpOptions = true,
        description = {"Runs the agent against a cluster: CSI mode, static mode or both (see --config).",
                "Serves /healthz, /readyz and /metrics on --metrics-address."},
        footerHeading = "%nExamples:%n",
        footer = { // laid out by ExampleFooter
            "# Static mode, as satoken-agent.service runs it",
            "satoken-agent run --config /etc/satoken/agent.yaml --kubeconfig /etc/satoken/kubeconfig",
            "# CSI mode, as the DaemonSet runs it (NODE_NAME from the pod's spec.nodeName)",
            "satoken-agent run --config /etc/satoken/agent.yaml --metrics-address 0.0.0.0:9810",
            "# JSON logs with debug detail, and fewer TokenRequests a second",
            "satoken-agent run --config agent.yaml --log-format json --log-level debug --qps 5 --burst 10"})
class RunCommand extends ClusterCommand implements Callable<Integer> {

    static final Path IN_CLUSTER_TOKEN = Path.of("/var/run/secrets/kubernetes.io/serviceaccount/token");

    private static final Logger startLog = LoggerFactory.getLogger(RunCommand.class);

    RunCommand() {
        super("127.0.0.1:9810");
    }

    @Option(names = "--config", required = true, paramLabel = "FILE", description = "The agent's YAML config.")
    Path config;

    @Option(names = "--node-name", paramLabel = "NAME", defaultValue = "${env:NODE_NAME}",
            description = "This node's name; required in CSI mode (default: $NODE_NAME).")
    String nodeName;

    @Option(names = "--qps", defaultValue = "20", description = "TokenRequests per second, sustained (default: ${DEFAULT-VALUE}).")
    double qps;

    @Option(names = "--burst", defaultValue = "40", description = "TokenRequests allowed in a burst (default: ${DEFAULT-VALUE}).")
    int burst;

    @Override
    public Integer call() throws Exception {
        logs.apply();
        Checked checked = check();
        ApiClient client = startClient(startLog);
        AgentRuntime.Settings settings = new AgentRuntime.Settings(checked.config(), config, checked.configBytes(),
                nodeName, checked.metricsAddress(), AgentRuntime.defaultAudiences(IN_CLUSTER_TOKEN),
                BuildVersion.current().version());
        RateLimiter limiter = new RateLimiter(qps, burst, RateLimiter.DEFAULT_MAX_WAIT);
        AgentRuntime agent = new AgentRuntime(settings, tokenSource(checked.config(), client, limiter), client);

        CountDownLatch stopped = new CountDownLatch(1);
        Thread onSigterm = CleanExit.onSigterm(() -> {
            agent.close();
            stopped.countDown();
        });
        try {
            agent.start();
        } catch (Exception e) {
            if (CleanExit.cancel(onSigterm)) { // a failed start exits with its own status, not the hook's 0
                agent.close();
            }
            throw e;
        }
        stopped.await();
        return 0;
    }

    /**
     * Where tokens come from. With {@code tokenSource: kubelet} nowhere the agent asks: the kubelet hands each volume's
     * tokens over at every publish. Else TokenRequests, with the agent's own client, or with {@code tokenSource:
     * node-impersonation} a second one that acts as this node, once {@link NodeImpersonationProbe} has found that the
     * API server allows it (else the agent does not start: it never falls back to its own credential).
     */
    private TokenSource tokenSource(AgentConfig config, ApiClient client, RateLimiter limiter) throws Exception {
        switch (config.tokenSource()) {
            case KUBELET:
                return new DeliveredTokens(InstantSource.system());
            case REQUEST:
                return new TokenRequestSource(client, limiter);
            case NODE_IMPERSONATION:
                break;
        }
        ApiClient asNode = NodeImpersonation.asNode(client(), nodeName);
        startLog.info("node impersonation: {}", NodeImpersonationProbe.check(NodeImpersonationProbe.api(client, asNode),
                nodeName));
        return new TokenRequestSource(asNode, limiter);
    }

    /** What {@code run} starts with: the flags checked and the config parsed. */
    record Checked(AgentConfig config, byte[] configBytes, InetSocketAddress metricsAddress) {
    }

    /**
     * Checks every flag, reads and parses the config with {@link AgentConfigParser} and, when given, the
     * {@code --kubeconfig} file's syntax, without contacting a cluster.
     *
     * @throws UsageErrors with every error found, each naming its flag, or the config's field and rule
     */
    Checked check() {
        List<String> errors = new ArrayList<>();
        InetSocketAddress address = clientAndMetrics.metricsAddress(errors);
        if (!(qps > 0) || burst < 1) {
            errors.add("--qps must be > 0 and --burst >= 1, got qps=" + qps + " burst=" + burst);
        }
        byte[] bytes = null;
        AgentConfig parsed = null;
        try {
            bytes = Files.readAllBytes(config);
            parsed = AgentConfigParser.parse(new String(bytes, StandardCharsets.UTF_8));
        } catch (IOException e) {
            errors.add("--config " + config + ": " + FileErrors.reason(e));
        } catch (InvalidConfigException e) {
            e.errors().forEach(error -> errors.add("--config " + config + ": " + error));
        }
        if (parsed != null && parsed.mode().csi() && (nodeName == null || nodeName.isBlank())) {
            errors.add("CSI mode needs this node's name: pass --node-name or set NODE_NAME");
        }
        throwIfAny(errors);
        return new Checked(parsed, bytes, address);
    }
}
